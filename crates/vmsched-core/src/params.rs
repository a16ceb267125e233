//! Parameter declarations and validated parameter values.
//!
//! Every scheduler and every workload declares its parameters once, as a list
//! of [`ParamSpec`]. The same declaration drives scenario validation, the
//! `vmsched schedulers` listing, the docs and the Python API.

use crate::error::{suggestion, ScenarioError};
use serde_json::Value as Json;

/// The type and allowed values of a parameter.
#[derive(Clone, Copy, Debug)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int { min: i64, max: i64 },
    /// A number in `min..=max`.
    Float { min: f64, max: f64 },
    /// true or false.
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A Xen release such as "4.22", between `min` and `max` inclusive.
    Version { min: Version, max: Version },
    /// A list of numbers, each in `min..=max`.
    FloatList { min: f64, max: f64 },
    /// A name (a non-empty string without spaces), such as a domain's; its
    /// owner checks what it names.
    Name,
    /// A list of names (each as [`ParamKind::Name`]), such as the domains
    /// a workload talks to; its owner checks what they name.
    NameList,
    /// A list of tables (TOML `[[x]]` or `x = [{...}, ...]`), each validated
    /// against these field declarations.
    TableList(&'static [ParamSpec]),
}

/// Where a parameter is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamScope {
    /// In `[scheduler]` (pool-wide, what `xl sched-credit -s` sets).
    Global,
    /// Per domain, in `[domain.sched]` (what `xl sched-credit -d` sets).
    Domain,
    /// A workload's own parameter, in `[domain.workload]`.
    Workload,
}

/// A default value.
#[derive(Clone, Copy, Debug)]
pub enum Default {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'static str),
    FloatList(&'static [f64]),
    /// An empty [`ParamKind::TableList`] or [`ParamKind::NameList`].
    EmptyList,
    /// The parameter must be given.
    Required,
}

/// One declared parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// Name as in Xen's tools (`weight`, `tslice_ms`, `ratelimit_us`, ...).
    pub name: &'static str,
    /// Unit (`ms`, `us`, `%`, `` for dimensionless).
    pub unit: &'static str,
    pub kind: ParamKind,
    pub default: Default,
    pub scope: ParamScope,
    /// One line saying what it does.
    pub doc: &'static str,
}

/// The declarations `a` followed by `b`, as one array: a scheduler built on
/// another declares the other's parameters and its own, each written once
/// (`N` must be `a.len() + b.len()`; checked at compile time when used in a
/// `const`).
pub const fn concat<const N: usize>(a: &[ParamSpec], b: &[ParamSpec]) -> [ParamSpec; N] {
    assert!(
        a.len() + b.len() == N,
        "concat: N must be a.len() + b.len()"
    );
    assert!(N > 0, "concat: nothing to concatenate");
    let mut out = [if a.is_empty() { b[0] } else { a[0] }; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// A Xen release number such as "4.22" or "3.0.3", compared numerically
/// ("4.9" < "4.10"). "4.22" means 4.22.0, the first release of that line; as
/// the upper bound of a range, a line admits all its patch releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
}

impl Version {
    /// `major.minor` (patch 0: the start of the release line).
    pub const fn new(major: u16, minor: u16) -> Version {
        Version {
            major,
            minor,
            patch: 0,
        }
    }

    /// `major.minor.patch`.
    pub const fn with_patch(major: u16, minor: u16, patch: u16) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parse "4.22" or "3.0.3".
    pub fn parse(s: &str) -> Option<Version> {
        let mut it = s.trim().split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = match it.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        if it.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
        })
    }

    /// Is this release within `min..=max`, where `max` admits every patch
    /// release of its line?
    pub fn within(self, min: Version, max: Version) -> bool {
        self >= min && (self.major, self.minor) <= (max.major, max.minor)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.patch == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

/// A validated parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    FloatList(Vec<f64>),
    NameList(Vec<String>),
    TableList(Vec<Params>),
}

impl Value {
    /// The value as JSON (for summaries and the Python API).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => Json::from(*f),
            Value::Bool(b) => Json::from(*b),
            Value::Str(s) => Json::from(s.clone()),
            Value::FloatList(v) => Json::from(v.clone()),
            Value::NameList(v) => Json::from(v.clone()),
            Value::TableList(v) => Json::from(v.iter().map(Params::to_json).collect::<Vec<_>>()),
        }
    }
}

/// A complete, validated set of values for a list of specs (defaults filled in).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    vals: Vec<(&'static str, Value)>,
    explicit: Vec<&'static str>,
}

impl Params {
    fn get(&self, name: &str) -> &Value {
        self.vals
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("parameter '{name}' is not declared"))
    }

    /// An integer parameter. Panics if `name` is not a declared integer (a bug).
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Int(i) => *i,
            v => panic!("parameter '{name}' is {v:?}, not an integer"),
        }
    }

    /// A number parameter (integers are accepted).
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(f) => *f,
            Value::Int(i) => *i as f64,
            v => panic!("parameter '{name}' is {v:?}, not a number"),
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Bool(b) => *b,
            v => panic!("parameter '{name}' is {v:?}, not a bool"),
        }
    }

    /// A word (choice) parameter.
    pub fn str(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Str(s) => s,
            v => panic!("parameter '{name}' is {v:?}, not a string"),
        }
    }

    /// A version parameter.
    pub fn version(&self, name: &str) -> Version {
        Version::parse(self.str(name)).expect("validated version")
    }

    /// A list-of-numbers parameter.
    pub fn float_list(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Value::FloatList(v) => v,
            v => panic!("parameter '{name}' is {v:?}, not a list"),
        }
    }

    /// A list-of-names parameter.
    pub fn name_list(&self, name: &str) -> &[String] {
        match self.get(name) {
            Value::NameList(v) => v,
            v => panic!("parameter '{name}' is {v:?}, not a list of names"),
        }
    }

    /// A list-of-tables parameter: one validated set of fields per table.
    pub fn table_list(&self, name: &str) -> &[Params] {
        match self.get(name) {
            Value::TableList(v) => v,
            v => panic!("parameter '{name}' is {v:?}, not a list of tables"),
        }
    }

    /// Was `name` given explicitly (rather than defaulted)?
    pub fn is_explicit(&self, name: &str) -> bool {
        self.explicit.contains(&name)
    }

    /// Name/value pairs in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.vals.iter().map(|(n, v)| (*n, v))
    }

    /// Replace one value (already validated by [`validate_one`]).
    pub fn set(&mut self, name: &'static str, v: Value) {
        if let Some(slot) = self.vals.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = v;
        } else {
            self.vals.push((name, v));
        }
        if !self.explicit.contains(&name) {
            self.explicit.push(name);
        }
    }

    /// As a JSON object.
    pub fn to_json(&self) -> Json {
        let mut m = serde_json::Map::new();
        for (n, v) in &self.vals {
            m.insert((*n).to_string(), v.to_json());
        }
        Json::Object(m)
    }
}

fn json_type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "nothing",
        Json::Bool(_) => "a boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a table",
    }
}

/// Show a JSON value the way a user wrote it.
pub fn show(v: &Json) -> String {
    match v {
        // Control characters escaped, so that an error stays one line.
        Json::String(s) => format!("\"{}\"", s.escape_debug()),
        other => other.to_string(),
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl ParamSpec {
    /// An integer parameter in `min..=max` with its default: dimensionless,
    /// set in `[scheduler]`, until [`ParamSpec::unit`],
    /// [`ParamSpec::per_domain`] and [`ParamSpec::doc`] say otherwise
    /// (`ParamSpec::int("weight", 256, 1, 65535).per_domain().doc("...")`).
    pub const fn int(name: &'static str, default: i64, min: i64, max: i64) -> ParamSpec {
        ParamSpec {
            name,
            unit: "",
            kind: ParamKind::Int { min, max },
            default: Default::Int(default),
            scope: ParamScope::Global,
            doc: "",
        }
    }

    /// The same parameter, in `unit`.
    pub const fn unit(self, unit: &'static str) -> ParamSpec {
        ParamSpec { unit, ..self }
    }

    /// The same parameter, set per domain (`[domain.sched]`).
    pub const fn per_domain(self) -> ParamSpec {
        ParamSpec {
            scope: ParamScope::Domain,
            ..self
        }
    }

    /// The same parameter, with what it does in one line.
    pub const fn doc(self, doc: &'static str) -> ParamSpec {
        ParamSpec { doc, ..self }
    }

    /// What the parameter accepts, in words.
    pub fn expected(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.unit)
        };
        match &self.kind {
            ParamKind::Int { min, max } => format!("an integer in {min}..={max}{unit}"),
            ParamKind::Float { min, max } => {
                format!("a number in {}..={}{unit}", fmt_num(*min), fmt_num(*max))
            }
            ParamKind::Bool => "true or false".into(),
            ParamKind::Choice(c) => format!("one of {}", c.join(", ")),
            ParamKind::Version { min, max } => {
                format!("a Xen version from \"{min}\" to \"{max}\", as a string such as \"{max}\"")
            }
            ParamKind::FloatList { min, max } => format!(
                "a list of numbers, each in {}..={}{unit}",
                fmt_num(*min),
                fmt_num(*max)
            ),
            ParamKind::Name => "a name (a non-empty string without spaces)".into(),
            ParamKind::NameList => "a list of names (non-empty strings without spaces)".into(),
            ParamKind::TableList(fields) => format!(
                "a list of tables with {}",
                fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// The default, as text (for listings).
    pub fn default_text(&self) -> String {
        match &self.default {
            Default::Int(i) => i.to_string(),
            Default::Float(f) => fmt_num(*f),
            Default::Bool(b) => b.to_string(),
            Default::Str(s) => s.to_string(),
            Default::FloatList(v) => format!("{v:?}"),
            Default::EmptyList => "[]".into(),
            Default::Required => "(required)".into(),
        }
    }

    /// The range, as text (for listings).
    pub fn range_text(&self) -> String {
        match &self.kind {
            ParamKind::Int { min, max } => format!("{min}..{max}"),
            ParamKind::Float { min, max } => format!("{}..{}", fmt_num(*min), fmt_num(*max)),
            ParamKind::Bool => "true|false".into(),
            ParamKind::Choice(c) => c.join("|"),
            ParamKind::Version { min, max } => format!("{min}..{max}"),
            ParamKind::FloatList { min, max } => format!("[{}..{}]", fmt_num(*min), fmt_num(*max)),
            ParamKind::Name => "name".into(),
            ParamKind::NameList => "[name, ...]".into(),
            ParamKind::TableList(fields) => format!(
                "[{{{}}}, ...]",
                fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    fn default_value(&self) -> Option<Value> {
        Some(match &self.default {
            Default::Int(i) => Value::Int(*i),
            Default::Float(f) => Value::Float(*f),
            Default::Bool(b) => Value::Bool(*b),
            Default::Str(s) => Value::Str((*s).to_string()),
            Default::FloatList(v) => Value::FloatList(v.to_vec()),
            Default::EmptyList => match self.kind {
                ParamKind::NameList => Value::NameList(Vec::new()),
                _ => Value::TableList(Vec::new()),
            },
            Default::Required => return None,
        })
    }

    /// As JSON, for `vmsched schedulers` and the docs.
    pub fn to_json(&self) -> Json {
        serde_json::json!({
            "name": self.name,
            "unit": self.unit,
            "default": self.default_text(),
            "range": self.range_text(),
            "expected": self.expected(),
            "scope": match self.scope {
                ParamScope::Global => "global",
                ParamScope::Domain => "domain",
                ParamScope::Workload => "workload",
            },
            "doc": self.doc,
        })
    }
}

/// Check one value against its spec. `path` names the field for the error.
pub fn validate_one(spec: &ParamSpec, v: &Json, path: &str) -> Result<Value, ScenarioError> {
    let bad = |what: String| ScenarioError::new(path, what);
    let wrong_type = || {
        bad(format!(
            "{} is {}; expected {}",
            show(v),
            json_type_name(v),
            spec.expected()
        ))
    };
    match &spec.kind {
        ParamKind::Int { min, max } => {
            let i = match v {
                Json::Number(n) => {
                    if let Some(i) = n.as_i64() {
                        i
                    } else if let Some(f) = n.as_f64() {
                        if f.fract() != 0.0 {
                            return Err(bad(format!(
                                "{} is not a whole number; expected {}",
                                show(v),
                                spec.expected()
                            )));
                        }
                        return Err(bad(format!(
                            "{} is out of range; expected {}",
                            show(v),
                            spec.expected()
                        )));
                    } else {
                        return Err(wrong_type());
                    }
                }
                _ => return Err(wrong_type()),
            };
            if i < *min || i > *max {
                return Err(bad(format!(
                    "{i} is out of range; expected {}",
                    spec.expected()
                )));
            }
            Ok(Value::Int(i))
        }
        ParamKind::Float { min, max } => {
            let f = v.as_f64().ok_or_else(wrong_type)?;
            if !f.is_finite() || f < *min || f > *max {
                return Err(bad(format!(
                    "{} is out of range; expected {}",
                    show(v),
                    spec.expected()
                )));
            }
            Ok(Value::Float(f))
        }
        ParamKind::Bool => v.as_bool().map(Value::Bool).ok_or_else(wrong_type),
        ParamKind::Choice(choices) => {
            let s = v.as_str().ok_or_else(wrong_type)?;
            if choices.contains(&s) {
                Ok(Value::Str(s.to_string()))
            } else {
                Err(bad(format!(
                    "\"{s}\" is not allowed; expected {}{}",
                    spec.expected(),
                    suggestion(s, choices.iter().copied())
                )))
            }
        }
        ParamKind::Version { min, max } => {
            // A bare number such as 4.2 is ambiguous ("4.2" vs "4.20"), so only strings.
            let s = v.as_str().ok_or_else(wrong_type)?;
            match Version::parse(s) {
                Some(ver) if ver.within(*min, *max) => Ok(Value::Str(ver.to_string())),
                Some(_) => Err(bad(format!(
                    "\"{s}\" is out of range; expected {}",
                    spec.expected()
                ))),
                None => Err(bad(format!(
                    "\"{s}\" is not a version; expected {}",
                    spec.expected()
                ))),
            }
        }
        ParamKind::FloatList { min, max } => {
            let arr = v.as_array().ok_or_else(wrong_type)?;
            let mut out = Vec::with_capacity(arr.len());
            for (i, x) in arr.iter().enumerate() {
                let f = x.as_f64().ok_or_else(|| {
                    ScenarioError::new(
                        format!("{path}[{i}]"),
                        format!("{} is {}; expected a number", show(x), json_type_name(x)),
                    )
                })?;
                if f < *min || f > *max {
                    return Err(ScenarioError::new(
                        format!("{path}[{i}]"),
                        format!("{} is out of range; expected {}", show(x), spec.expected()),
                    ));
                }
                out.push(f);
            }
            Ok(Value::FloatList(out))
        }
        ParamKind::Name => {
            let s = v.as_str().ok_or_else(wrong_type)?;
            if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(bad(format!(
                    "\"{s}\" is not allowed; expected {}",
                    spec.expected()
                )));
            }
            Ok(Value::Str(s.to_string()))
        }
        ParamKind::NameList => {
            let arr = v.as_array().ok_or_else(wrong_type)?;
            let mut out = Vec::with_capacity(arr.len());
            for (i, x) in arr.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let s = x.as_str().ok_or_else(|| {
                    ScenarioError::new(
                        &p,
                        format!("{} is {}; expected a name", show(x), json_type_name(x)),
                    )
                })?;
                if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    return Err(ScenarioError::new(
                        &p,
                        format!("\"{s}\" is not allowed; expected a non-empty name without spaces"),
                    ));
                }
                out.push(s.to_string());
            }
            Ok(Value::NameList(out))
        }
        ParamKind::TableList(fields) => {
            let arr = v.as_array().ok_or_else(wrong_type)?;
            let mut out = Vec::with_capacity(arr.len());
            for (i, x) in arr.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let t = x.as_object().ok_or_else(|| {
                    ScenarioError::new(
                        &p,
                        format!("{} is {}; expected a table", show(x), json_type_name(x)),
                    )
                })?;
                out.push(validate(
                    fields,
                    t,
                    &p,
                    &format!("an entry of {}", spec.name),
                )?);
            }
            Ok(Value::TableList(out))
        }
    }
}

/// Validate a table of parameters against `specs`: unknown names, types and
/// ranges. `path` is the table's path (`scheduler`, `domain[1].sched`, ...);
/// `owner` names what the specs belong to, for the unknown-key message.
pub fn validate(
    specs: &[ParamSpec],
    table: &serde_json::Map<String, Json>,
    path: &str,
    owner: &str,
) -> Result<Params, ScenarioError> {
    for key in table.keys() {
        if !specs.iter().any(|s| s.name == key) {
            let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let listing = if known.is_empty() {
                format!("{owner} takes no parameters here")
            } else {
                format!("{owner} takes {}", known.join(", "))
            };
            return Err(ScenarioError::new(
                join_path(path, key),
                format!(
                    "unknown parameter '{key}'; {listing}{}",
                    suggestion(key, known.iter().copied())
                ),
            ));
        }
    }
    let mut out = Params::default();
    for spec in specs {
        let p = join_path(path, spec.name);
        match table.get(spec.name) {
            Some(v) => {
                let val = validate_one(spec, v, &p)?;
                out.vals.push((spec.name, val));
                out.explicit.push(spec.name);
            }
            None => match spec.default_value() {
                Some(d) => out.vals.push((spec.name, d)),
                None => {
                    return Err(ScenarioError::new(
                        p,
                        format!("is required; expected {}", spec.expected()),
                    ))
                }
            },
        }
    }
    Ok(out)
}

/// `a.b`, or `b` when `a` is empty.
pub fn join_path(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "weight",
            unit: "",
            kind: ParamKind::Int { min: 1, max: 65535 },
            default: Default::Int(256),
            scope: ParamScope::Domain,
            doc: "",
        },
        ParamSpec {
            name: "xen_version",
            unit: "",
            kind: ParamKind::Version {
                min: Version::new(3, 0),
                max: Version::new(4, 22),
            },
            default: Default::Str("4.22"),
            scope: ParamScope::Global,
            doc: "",
        },
    ];

    fn table(v: serde_json::Value) -> serde_json::Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_and_values() {
        let p = validate(SPECS, &table(json!({"weight": 512})), "x", "credit").unwrap();
        assert_eq!(p.int("weight"), 512);
        assert_eq!(p.version("xen_version"), Version::new(4, 22));
        assert!(p.is_explicit("weight"));
        assert!(!p.is_explicit("xen_version"));
    }

    #[test]
    fn errors_name_path_value_and_expectation() {
        let e = validate(
            SPECS,
            &table(json!({"weight": 0})),
            "domain[1].sched",
            "credit",
        )
        .unwrap_err();
        assert_eq!(e.path, "domain[1].sched.weight");
        assert!(e.message.contains("0 is out of range"), "{e}");
        assert!(e.message.contains("1..=65535"), "{e}");
        let e = validate(SPECS, &table(json!({"wieght": 3})), "d", "credit").unwrap_err();
        assert!(e.message.contains("did you mean 'weight'"), "{e}");
        let e = validate(SPECS, &table(json!({"weight": "big"})), "d", "credit").unwrap_err();
        assert!(e.message.contains("is a string"), "{e}");
        let e = validate(SPECS, &table(json!({"xen_version": "5.1"})), "s", "credit").unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
    }

    const ENTRY: &[ParamSpec] = &[
        ParamSpec {
            name: "domain",
            unit: "",
            kind: ParamKind::Name,
            default: Default::Required,
            scope: ParamScope::Global,
            doc: "",
        },
        ParamSpec {
            name: "runtime_ms",
            unit: "ms",
            kind: ParamKind::Float {
                min: 0.0,
                max: 10.0,
            },
            default: Default::Float(1.0),
            scope: ParamScope::Global,
            doc: "",
        },
    ];
    const TABLES: &[ParamSpec] = &[ParamSpec {
        name: "schedule",
        unit: "",
        kind: ParamKind::TableList(ENTRY),
        default: Default::EmptyList,
        scope: ParamScope::Global,
        doc: "",
    }];

    #[test]
    fn table_lists_validate_each_entry() {
        let p = validate(TABLES, &table(json!({})), "scheduler", "x").unwrap();
        assert!(p.table_list("schedule").is_empty());
        let p = validate(
            TABLES,
            &table(json!({"schedule": [{"domain": "a"}, {"domain": "b", "runtime_ms": 2}]})),
            "scheduler",
            "x",
        )
        .unwrap();
        let t = p.table_list("schedule");
        assert_eq!((t[0].str("domain"), t[0].float("runtime_ms")), ("a", 1.0));
        assert_eq!(t[1].float("runtime_ms"), 2.0);
        assert_eq!(p.to_json()["schedule"][1]["domain"], "b");
        let e = validate(
            TABLES,
            &table(json!({"schedule": [{"domain": "a"}, {"runtime_ms": 2}]})),
            "scheduler",
            "x",
        )
        .unwrap_err();
        assert_eq!(e.path, "scheduler.schedule[1].domain");
        let e = validate(
            TABLES,
            &table(json!({"schedule": [{"domain": "a b"}]})),
            "scheduler",
            "x",
        )
        .unwrap_err();
        assert_eq!(e.path, "scheduler.schedule[0].domain");
        let e = validate(TABLES, &table(json!({"schedule": [3]})), "scheduler", "x").unwrap_err();
        assert_eq!(e.path, "scheduler.schedule[0]");
        assert!(e.message.contains("expected a table"), "{e}");
        let e = validate(
            TABLES,
            &table(json!({"schedule": {"domain": "a"}})),
            "scheduler",
            "x",
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("a list of tables with domain, runtime_ms"),
            "{e}"
        );
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(Version::parse("4.9").unwrap() < Version::parse("4.10").unwrap());
        assert_eq!(Version::parse("3.0.3"), Some(Version::with_patch(3, 0, 3)));
        assert!(Version::parse("3.0.3").unwrap() < Version::new(3, 1));
        assert!(Version::parse("3.0.2").unwrap() < Version::parse("3.0.3").unwrap());
        assert_eq!(Version::parse("3.0.3").unwrap().to_string(), "3.0.3");
        assert_eq!(Version::parse("4.22").unwrap().to_string(), "4.22");
        assert!(Version::parse("4.22.1")
            .unwrap()
            .within(Version::new(3, 0), Version::new(4, 22)));
        assert!(!Version::parse("4.23")
            .unwrap()
            .within(Version::new(3, 0), Version::new(4, 22)));
        assert_eq!(Version::parse("x"), None);
    }
}
