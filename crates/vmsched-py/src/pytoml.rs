//! A scenario file's TOML as the JSON text of the tree Python's `tomllib`
//! makes of it, for the files where the two readers are known to agree; for
//! any other file `None`, and the caller reads it with `tomllib` itself (which
//! also gives a bad file its error message). `vmsched run` then does not load
//! `tomllib` (nor `typing`, `datetime` and `string` with it), about a sixth
//! of the command's start-up.
//!
//! The `toml` crate reads TOML 1.1, a superset of the 1.0 that `tomllib`
//! reads; the file is refused here (so read by `tomllib`) where it could use
//! an addition of 1.1 or where the trees could differ:
//! - text that is not ASCII (1.1 widens the bare keys), that has a carriage
//!   return (line endings inside multi-line strings), or a backslash before
//!   `x` or `e` (1.1's `\xHH` and `\e` escapes);
//! - an inline table spread over lines or with a trailing comma (1.1);
//! - a date or time (`tomllib` gives Python dates, which a scenario refuses
//!   with their own message), a number that is not finite, an integer beyond
//!   64 bits, tables nested deeper than `max_depth`;
//! - a table opened by a `[header]` after a deeper header had created it:
//!   `tomllib` keeps every key where it first appeared, the crate's map puts
//!   that one at its header, so the keys' order could differ.
//!
//! Keys keep the order of their first appearance in the file (the crate's map
//! is sorted by name; each key's place is its position in the text), numbers
//! are written as Python's `repr` writes them (`pyjson::write_float`), so
//! `json.loads` gives back exactly the same values.

use crate::pyjson;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The tree of `text` as JSON, or `None` where `tomllib` must read it.
pub fn to_json(text: &str, max_depth: usize) -> Option<String> {
    if !text.is_ascii() || text.contains('\r') || text.contains("\\x") || text.contains("\\e") {
        return None;
    }
    let root = DeTable::parse(text).ok()?;
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    write_table(root.get_ref(), text, None, 0, max_depth, &mut out)?;
    Some(out)
}

fn write_value(
    v: &Spanned<DeValue<'_>>,
    text: &str,
    key_start: Option<usize>,
    depth: usize,
    max_depth: usize,
    out: &mut String,
) -> Option<()> {
    match v.get_ref() {
        DeValue::String(s) => pyjson::write_str(s, out),
        DeValue::Integer(i) => {
            let n = i64::from_str_radix(i.as_str(), i.radix()).ok()?;
            out.push_str(&n.to_string());
        }
        DeValue::Float(f) => {
            let x: f64 = f.as_str().replace('_', "").parse().ok()?;
            if !x.is_finite() {
                return None;
            }
            pyjson::write_float(x, out);
        }
        DeValue::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        DeValue::Datetime(_) => return None,
        DeValue::Array(items) => {
            if depth >= max_depth {
                return None;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, text, None, depth + 1, max_depth, out)?;
            }
            out.push(']');
        }
        DeValue::Table(t) => {
            let span = v.span();
            let src = text.get(span.clone())?;
            if src.starts_with('{') {
                // An inline table: on one line, without a trailing comma (1.0).
                let inner = src.strip_suffix('}')?.trim_end();
                if src.contains('\n') || inner.ends_with(',') {
                    return None;
                }
            }
            if depth >= max_depth {
                return None;
            }
            write_table(t, text, key_start, depth + 1, max_depth, out)?;
        }
    }
    Some(())
}

/// A table's members in the order of their keys in the text. `key_start` is
/// where the table's own key is: a member's key before it means the table
/// was reopened by a later header (see the module's note).
fn write_table(
    t: &DeTable<'_>,
    text: &str,
    key_start: Option<usize>,
    depth: usize,
    max_depth: usize,
    out: &mut String,
) -> Option<()> {
    let mut members: Vec<_> = t.iter().collect();
    members.sort_by_key(|(k, _)| k.span().start);
    out.push('{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        let start = k.span().start;
        if key_start.is_some_and(|s| start < s) {
            return None;
        }
        if i > 0 {
            out.push_str(", ");
        }
        pyjson::write_str(k.get_ref(), out);
        out.push_str(": ");
        write_value(v, text, Some(start), depth, max_depth, out)?;
    }
    out.push('}');
    Some(())
}
