//! A hint: what explains a figure or puts data at risk, in plain words,
//! with a stable code a fleet can filter on (the list: docs/hints.md).
//! Every command's hints are this one type: the probe's and `storages`'
//! (the storage stack, its links and health), `qualify`'s, `guest`'s (the
//! VM settings that cost), `ceph`'s and `net`'s. Text, JSON and CSV
//! render it one way: `[code] subject: message` in text, `{code, subject,
//! message}` in JSON, [`csv_cell`] in a CSV column.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "HintForm")]
pub struct Hint {
    /// `write-cache-off`, `osd-slow`, `cache-absorbs-flushes`, ...
    pub code: String,
    /// What it is about: a disk, pool, OSD, VM drive, node or link.
    pub subject: String,
    /// What is true of it, and what to do.
    pub message: String,
}

impl Hint {
    pub fn new(code: &str, subject: impl Into<String>, message: impl Into<String>) -> Self {
        Hint {
            code: code.into(),
            subject: subject.into(),
            message: message.into(),
        }
    }

    /// `subject: message`, or the message alone where it has no subject.
    pub fn sentence(&self) -> String {
        if self.subject.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.subject, self.message)
        }
    }
}

/// `[code] subject: message` (a hint read from a result written before
/// hints had codes has none: its sentence alone).
impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.code.is_empty() {
            f.write_str(&self.sentence())
        } else {
            write!(f, "[{}] {}", self.code, self.sentence())
        }
    }
}

/// Hints in one CSV cell: each as its text, `; ` between them.
pub fn csv_cell(hints: &[Hint]) -> String {
    hints
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every form a hint has had in pveprobe's JSON, so older results still
/// read: `{code, subject, message}` (now, and `ceph`'s always), the
/// probe's `{code, about, text}` (`text` the whole sentence), `guest`'s
/// `{code, disk, message}`, and a bare sentence (`net`'s, and the probe's
/// before hints had codes).
#[derive(Deserialize)]
#[serde(untagged)]
enum HintForm {
    Now {
        code: String,
        subject: String,
        message: String,
    },
    AboutText {
        code: String,
        about: String,
        text: String,
    },
    Disk {
        code: String,
        disk: String,
        message: String,
    },
    Sentence(String),
}

impl From<HintForm> for Hint {
    fn from(form: HintForm) -> Self {
        match form {
            HintForm::Now {
                code,
                subject,
                message,
            } => Hint {
                code,
                subject,
                message,
            },
            HintForm::AboutText { code, about, text } => {
                let message = text
                    .strip_prefix(&format!("{about}: "))
                    .unwrap_or(&text)
                    .to_string();
                Hint {
                    code,
                    subject: about,
                    message,
                }
            }
            HintForm::Disk {
                code,
                disk,
                message,
            } => Hint {
                code,
                subject: disk,
                message,
            },
            HintForm::Sentence(text) => match text.split_once(": ") {
                Some((subject, message)) => Hint::new("", subject, message),
                None => Hint::new("", "", text),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_ever_written_reads_as_one_hint() {
        let now = Hint::new("write-cache-off", "sda", "its write cache is off");
        let read = |json: &str| serde_json::from_str::<Hint>(json).unwrap();
        assert_eq!(read(&serde_json::to_string(&now).unwrap()), now);
        assert_eq!(
            read(
                r#"{"code":"write-cache-off","about":"sda","text":"sda: its write cache is off"}"#
            ),
            now
        );
        assert_eq!(
            read(r#"{"code":"write-cache-off","disk":"sda","message":"its write cache is off"}"#),
            now
        );
        let old = read(r#""sda: its write cache is off""#);
        assert_eq!((old.subject.as_str(), old.code.as_str()), ("sda", ""));
        assert_eq!(old.to_string(), "sda: its write cache is off");
        assert_eq!(
            now.to_string(),
            "[write-cache-off] sda: its write cache is off"
        );
        assert_eq!(
            serde_json::to_value(&now).unwrap(),
            serde_json::json!({"code": "write-cache-off", "subject": "sda", "message": "its write cache is off"})
        );
        assert_eq!(
            csv_cell(&[now.clone(), Hint::new("net-loss", "", "y")]),
            "[write-cache-off] sda: its write cache is off; [net-loss] y"
        );
    }
}
