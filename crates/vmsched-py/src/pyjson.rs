//! JSON text byte for byte as Python's `json.dumps(obj, indent=2)` writes it,
//! for `summary.json`: Python's encoder is pure Python when it indents, and on
//! a large host it was most of the results step's time and memory.
//!
//! Two ways in, both giving what `json.dumps(..., indent=2)` gives:
//! - [`indent`]: text from `json.dumps(obj)` (the C encoder, default
//!   separators `", "` and `": "`) laid out with Python's indentation; its
//!   numbers and strings are Python's own, copied as they are.
//! - [`write_value`]: a `serde_json::Value` (the core's summary) written as
//!   Python writes the tree `json.loads` makes of the core's text: keys in the
//!   map's order, strings with every character outside printable ASCII
//!   escaped (`ensure_ascii`), floats as `repr` writes them.

use serde_json::Value;
use std::fmt::Write;
use vmsched_core::SummaryParts;

/// Python's indentation: two spaces per level.
const INDENT: usize = 2;

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    push_n(out, ' ', INDENT * depth);
}

fn push_n(out: &mut String, c: char, n: usize) {
    for _ in 0..n {
        out.push(c);
    }
}

/// `text`, the output of Python's `json.dumps(obj)` with its default
/// separators, laid out as `json.dumps(obj, indent=2)` lays it out, nested
/// `depth` levels deep (0 for a whole document).
pub fn indent(text: &str, depth: usize, out: &mut String) {
    out.reserve(text.len() * 2);
    let b = text.as_bytes();
    let mut depth = depth;
    let mut i = 0;
    let mut start = 0; // the first byte not yet copied
    while i < b.len() {
        match b[i] {
            b'"' => {
                // A string: to its closing quote, escapes included.
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            open @ (b'{' | b'[') => {
                out.push_str(&text[start..i]);
                let close = if open == b'{' { b'}' } else { b']' };
                if b.get(i + 1) == Some(&close) {
                    // Python writes an empty container as `{}` or `[]`.
                    out.push(open as char);
                    out.push(close as char);
                    i += 2;
                } else {
                    out.push(open as char);
                    depth += 1;
                    newline(out, depth);
                    i += 1;
                }
                start = i;
            }
            close @ (b'}' | b']') => {
                out.push_str(&text[start..i]);
                depth = depth
                    .checked_sub(1)
                    .expect("json.dumps text has balanced brackets");
                newline(out, depth);
                out.push(close as char);
                i += 1;
                start = i;
            }
            b',' => {
                out.push_str(&text[start..i]);
                out.push(',');
                newline(out, depth);
                // The separator's space.
                i += if b.get(i + 1) == Some(&b' ') { 2 } else { 1 };
                start = i;
            }
            b':' => {
                out.push_str(&text[start..i]);
                out.push_str(": ");
                i += if b.get(i + 1) == Some(&b' ') { 2 } else { 1 };
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[start..]);
}

/// A string as Python's JSON encoder writes it with `ensure_ascii` (the
/// default): printable ASCII as it is, `"` and `\` escaped, the five short
/// escapes, everything else as `\uXXXX` (UTF-16, lower-case hex).
pub fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// The mantissa and exponent of `{:e}`-style text ("-1.25e-7").
fn split_sci(sci: &str) -> (&str, i32) {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    (mantissa, exp.parse().expect("an integer exponent"))
}

/// A finite float as Python's `repr` writes it: the fewest significant
/// digits that read back as the same float and, of those, the closest to it,
/// a tie going to the even digit (David Gay's shortest mode, which Python
/// uses); in positional notation when the decimal exponent is from -4 to 15
/// (with `.0` when whole), else as `d.ddde±XX`. Rust's `{:e}` gives the
/// fewest digits but breaks a tie upwards (`…297.125` as `…297.13`, where
/// Python writes `…297.12`), so the value is formatted again correctly
/// rounded to that many digits (`{:.N$e}` rounds a tie to even), which is
/// kept when it reads back as the same float.
pub fn write_float(x: f64, out: &mut String) {
    let shortest = format!("{x:e}");
    let n = split_sci(&shortest)
        .0
        .bytes()
        .filter(u8::is_ascii_digit)
        .count();
    let rounded = format!("{:.*e}", n.saturating_sub(1), x);
    let sci = if rounded.parse::<f64>() == Ok(x) {
        rounded
    } else {
        shortest
    };
    let (mantissa, exp) = split_sci(&sci);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let mut digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let n = digits.len() as i32;
    // The decimal point's place after the first `decpt` digits.
    let decpt = exp + 1;
    if negative {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
    } else if -4 < decpt && decpt <= 16 {
        if decpt <= 0 {
            out.push_str("0.");
            push_n(out, '0', (-decpt) as usize);
            out.push_str(&digits);
        } else if decpt >= n {
            out.push_str(&digits);
            push_n(out, '0', (decpt - n) as usize);
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(out, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// A scalar or container of the core's JSON as Python writes it with
/// `indent=2`, `depth` levels deep.
pub fn write_value(v: &Value, depth: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                let _ = write!(out, "{i}");
            } else if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else {
                write_float(n.as_f64().expect("a JSON number"), out);
            }
        }
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_value(item, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            let mut any = false;
            for (key, v) in map {
                member(key, &mut any, depth, out);
                write_value(v, depth + 1, out);
            }
            end_object(any, depth, out);
        }
    }
}

/// The start of an object's member `key` (`any`: has one been written?),
/// the object `depth` levels deep: what comes before the member's value.
fn member(key: &str, any: &mut bool, depth: usize, out: &mut String) {
    out.push_str(if *any { "," } else { "{" });
    *any = true;
    newline(out, depth + 1);
    write_str(key, out);
    out.push_str(": ");
}

/// An object's end (`any`: had it a member?), `depth` levels deep.
fn end_object(any: bool, depth: usize, out: &mut String) {
    if any {
        newline(out, depth);
        out.push('}');
    } else {
        out.push_str("{}");
    }
}

/// The summary document `vmsched.run` writes: the core's summary (given in
/// parts) with the scenario as run (`scenario`: Python's `json.dumps` text of
/// the tree) set as Python sets it, in the place of a `scenario` key the
/// summary has, else last; the whole as `json.dumps(summary, indent=2) +
/// "\n"`. Each domain's entry is built only when it is written, then handed
/// to `each` (its index and the entry) and let go: the whole summary is
/// never held (on a large host its domain entries are most of it).
pub fn summary_document(
    parts: &SummaryParts<'_>,
    scenario: &str,
    each: impl FnMut(usize, Value),
) -> String {
    let mut document = String::new();
    let written: Result<(), std::convert::Infallible> =
        write_summary_document(parts, scenario, each, |text| {
            document.push_str(text);
            Ok(())
        });
    let Ok(()) = written;
    document
}

/// Text handed on once this much is ready.
const CHUNK: usize = 1 << 16;

/// [`summary_document`]'s text handed to `sink` a piece at a time (about
/// [`CHUNK`] bytes, a domain's entry never cut), so that not even the text
/// is held whole; the first error of `sink` stops the writing and is
/// returned.
pub fn write_summary_document<E>(
    parts: &SummaryParts<'_>,
    scenario: &str,
    mut each: impl FnMut(usize, Value),
    mut sink: impl FnMut(&str) -> Result<(), E>,
) -> Result<(), E> {
    let mut out = String::new();
    let Some(map) = parts.top.as_object() else {
        unreachable!("the core's summary is an object")
    };
    let mut any = false;
    for (key, v) in map {
        member(key, &mut any, 0, &mut out);
        if key == "scenario" {
            indent(scenario, 1, &mut out);
        } else if key == "domains" {
            let n = parts.domains();
            if n == 0 {
                out.push_str("[]");
                continue;
            }
            out.push('[');
            for d in 0..n {
                if d > 0 {
                    out.push(',');
                }
                newline(&mut out, 2);
                let entry = parts.domain(d);
                write_value(&entry, 2, &mut out);
                each(d, entry);
                if out.len() >= CHUNK {
                    sink(&out)?;
                    out.clear();
                }
            }
            newline(&mut out, 1);
            out.push(']');
        } else {
            write_value(v, 1, &mut out);
        }
    }
    if !map.contains_key("scenario") {
        member("scenario", &mut any, 0, &mut out);
        indent(scenario, 1, &mut out);
    }
    end_object(any, 0, &mut out);
    out.push('\n');
    sink(&out)
}
