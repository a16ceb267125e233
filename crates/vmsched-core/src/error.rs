//! Errors: bad input (a scenario or parameter mistake the user must fix) and
//! internal errors (a bug in vmsched or in a user's scheduler).

use std::fmt;

/// A mistake in a scenario: where it is, and what was found versus expected.
///
/// Displayed as `path: message`; the caller that knows the file prefixes it
/// (`scenario.toml: domain[1].weight: 0 is out of range; expected 1..=65535`).
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// Dotted field path, e.g. `domain[2].sched.period`.
    pub path: String,
    /// What was found and what was expected, with a suggestion where one exists.
    pub message: String,
}

impl ScenarioError {
    /// An error at `path`. A key or value quoted in the path or the message
    /// may hold control characters (a TOML string can spell a newline); they
    /// are written as escapes so that the error stays the one line a user and
    /// a log read.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            path: one_line(path.into()),
            message: one_line(message.into()),
        }
    }
}

/// `text` with each control character written as its escape (`\n`, `\u{1b}`).
fn one_line(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Why a simulation could not run or finish.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// The scenario is wrong; nothing was simulated.
    Scenario(ScenarioError),
    /// An invariant broke during the run: a bug in vmsched or in a scheduler.
    Internal(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Scenario(e) => write!(f, "{e}"),
            SimError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<ScenarioError> for SimError {
    fn from(e: ScenarioError) -> SimError {
        SimError::Scenario(e)
    }
}

/// Edit distance between two short strings (for did-you-mean suggestions).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest of `known` to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lw = word.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| (edit_distance(&lw, &k.to_ascii_lowercase()), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// ` (did you mean 'x'?)` or an empty string.
pub fn suggestion<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(word, known)
        .map(|k| format!("; did you mean '{k}'?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("wieght", ["weight", "cap"]), Some("weight"));
        assert_eq!(
            did_you_mean("tslice", ["tslice_ms", "ratelimit_us"]),
            Some("tslice_ms")
        );
        assert_eq!(did_you_mean("zzzz", ["weight", "cap"]), None);
    }

    #[test]
    fn a_value_with_a_newline_stays_on_one_line() {
        let e = ScenarioError::new(
            "domain[1].name",
            "\"a\nb\u{1b}\" is not allowed; expected a non-empty name without spaces",
        );
        let text = e.to_string();
        assert!(!text.contains(['\n', '\u{1b}']), "{text:?}");
        assert!(text.contains(r#""a\nb\u{1b}" is not allowed"#), "{text}");
        let plain = ScenarioError::new("run.duration", "expected a duration");
        assert_eq!(plain.to_string(), "run.duration: expected a duration");
    }
}
