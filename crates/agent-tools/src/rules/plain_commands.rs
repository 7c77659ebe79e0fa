//! The commands of a script in a build without the shell parser (feature `shell-rules` off):
//! a script of plain words on one line — no quoting, expansion, redirection, chaining, grouping,
//! variable assignment, or a keyword or builtin that runs code (`source`, `coproc`, `trap`, ...)
//! — is one command (wrappers such as `sudo` or `env` still unwrapped); anything else cannot be
//! read. A deny rule then asks about the call instead of trusting it, and an allow rule does not
//! cover it, so a smaller build asks more; the corpus of hidden `rm -rf` spellings
//! (`tests/it/deny_spellings.rs`) is refused or asked about in both builds.

use super::wrappers::{Sink, unwrap};

/// The commands of a script.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Commands {
    /// Each command that runs, as its words (program first).
    pub(crate) commands: Vec<Vec<String>>,
    /// Why some of what runs cannot be known; `None` when all is known.
    pub(crate) unknown: Option<String>,
}

/// Shell keywords and builtins that run code they are given (a file, a string, a callback)
/// or start a compound command: only the shell parser follows them.
const RUNS_CODE: [&str; 24] = [
    ".",
    "source",
    "eval",
    "coproc",
    "enable",
    "trap",
    "fc",
    "bind",
    "complete",
    "compgen",
    "mapfile",
    "readarray",
    "function",
    "select",
    "if",
    "while",
    "until",
    "for",
    "case",
    "!",
    "{",
    "[[",
    "alias",
    "let",
];

impl Sink for Commands {
    fn command(&mut self, words: Vec<String>) {
        let program = words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
        if program.is_some_and(|p| RUNS_CODE.contains(&p)) {
            self.unknown(WHY);
        }
        self.commands.push(words);
    }

    fn unknown(&mut self, why: &str) {
        self.unknown.get_or_insert_with(|| why.to_owned());
    }

    fn script(&mut self, _script: &str) {
        self.unknown(WHY);
    }
}

/// Why a script that is not plain words cannot be read in this build.
const WHY: &str = "this build reads no shell syntax (the `shell-rules` feature is off)";

/// The commands `script` runs, when it is plain words.
pub(crate) fn commands(script: &str) -> Commands {
    let plain = |c: char| c.is_alphanumeric() || "-_./=:,+@%^".contains(c);
    // Only spaces and tabs separate words: a line break (or any other blank) separates commands.
    let words: Vec<&str> = script
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = Commands::default();
    let readable = !words.is_empty()
        && words.iter().all(|word| word.chars().all(plain))
        && !words[0].contains('=');
    if readable {
        unwrap(
            words.iter().map(|w| Some((*w).to_owned())).collect(),
            &mut found,
        );
    } else {
        found.unknown(WHY);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_one_command_and_wrappers_are_seen_through() {
        let found = commands("sudo rm -rf target");
        assert_eq!(found.unknown, None);
        assert_eq!(found.commands, [["rm", "-rf", "target"]]);
    }

    #[test]
    fn anything_but_plain_words_cannot_be_read() {
        for script in [
            "x=rm; $x -rf t",
            "make && rm -rf t",
            "X=1 rm -rf t",
            "sh -c 'rm'",
            "",
        ] {
            assert!(commands(script).unknown.is_some(), "{script}");
        }
    }
}
