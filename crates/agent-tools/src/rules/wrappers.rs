//! Commands that run another command (`sudo`, `env`, `timeout`, `xargs`, `sh -c`, `eval`,
//! `find -exec`, ...): what they run, and how a command is compared with a rule's words once
//! its flags are normalised (`rm -rf` = `rm -fr` = `rm -r -f` = `rm --recursive --force`).

/// Variables that make a shell (or every program) run code they name.
pub(crate) const RUNS_CODE: [&str; 10] = [
    "BASH_ENV",
    "ENV",
    "PS4",
    "PS0",
    "PS1",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "LD_PRELOAD",
    "LD_AUDIT",
];

/// Where what a command runs goes.
pub(crate) trait Sink {
    /// A command that runs, as its words.
    fn command(&mut self, words: Vec<String>);
    /// Some of what runs cannot be known, and why.
    fn unknown(&mut self, why: &str);
    /// A script that runs.
    fn script(&mut self, script: &str);
}

/// A word whose value depends on an expansion; it matches no rule word.
pub(crate) const UNKNOWN_WORD: &str = "\u{0}";

/// Options that take the next word as their value, per wrapper.
fn options_with_value(program: &str) -> &'static [&'static str] {
    match program {
        "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"],
        "env" => &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "exec" => &["-a"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "xargs" => &["-I", "-L", "-n", "-P", "-d", "-E", "-a", "-s"],
        "stdbuf" => &["-i", "-o", "-e"],
        "ionice" => &["-c", "-n", "-p"],
        "flock" => &["-w", "-E", "--timeout", "--conflict-exit-code"],
        "watch" => &["-n", "-d", "--interval"],
        _ => &[],
    }
}

/// Whether the assignments `words` start with set a variable that makes a shell or program
/// run code it names.
fn assignments_run_code(words: &[Option<String>]) -> bool {
    words
        .iter()
        .map_while(|w| w.as_deref().filter(|w| is_assignment(w)))
        .any(|w| {
            let name = w.split('=').next().unwrap_or(w);
            RUNS_CODE.contains(&name) || name.starts_with("BASH_FUNC_")
        })
}

/// Adds what `words` (a simple command, `None` for words that depend on an expansion) runs.
pub(crate) fn unwrap(words: Vec<Option<String>>, sink: &mut dyn Sink) {
    let mut words = words;
    loop {
        let Some(Some(first)) = words.first() else {
            sink.unknown("a program named by an expansion");
            return;
        };
        let program = first.rsplit('/').next().unwrap_or(first).to_owned();
        let rest = words[1..].to_vec();
        words = match program.as_str() {
            "nice" | "nohup" | "time" | "builtin" | "setsid" | "stdbuf" | "ionice" | "busybox"
            | "chronic" | "unbuffer" => skip_options(&program, &rest),
            // `sudo VAR=value COMMAND`: the assignments go to the command, as with `env`.
            "sudo" | "doas" => {
                let rest = skip_options(&program, &rest);
                if assignments_run_code(&rest) {
                    sink.unknown("a variable that makes a shell or program run code it names");
                }
                rest.into_iter()
                    .skip_while(|w| w.as_deref().is_some_and(is_assignment))
                    .collect()
            }
            "exec" | "command" => {
                if program == "command"
                    && rest
                        .iter()
                        .any(|w| matches!(w.as_deref(), Some("-v" | "-V")))
                {
                    return;
                }
                skip_options(&program, &rest)
            }
            "env" => {
                let rest = skip_options(&program, &rest);
                if assignments_run_code(&rest) {
                    sink.unknown("a variable that makes a shell or program run code it names");
                }
                if let Some(split) = split_string(&words[1..]) {
                    sink.script(&split);
                }
                rest.into_iter()
                    .skip_while(|w| w.as_deref().is_some_and(is_assignment))
                    .collect()
            }
            "timeout" => skip_options(&program, &rest).into_iter().skip(1).collect(),
            "flock" => {
                // `flock FILE -c SCRIPT` or `flock FILE COMMAND...`.
                let rest: Vec<_> = skip_options(&program, &rest).into_iter().skip(1).collect();
                if matches!(rest.first(), Some(Some(c)) if c == "-c") {
                    run_script(rest.get(1), sink);
                    return;
                }
                rest
            }
            "watch" => {
                let rest = skip_options(&program, &rest);
                run_script(Some(&join(&rest)), sink);
                return;
            }
            "xargs" => {
                let rest = skip_options(&program, &rest);
                if rest.is_empty() {
                    return;
                }
                rest
            }
            "eval" => {
                run_script(Some(&join(&rest)), sink);
                return;
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" | "fish" => {
                shell(&rest, sink);
                return;
            }
            "find" => {
                find(&rest, sink);
                return;
            }
            _ => {
                sink.command(
                    std::iter::once(Some(program))
                        .chain(rest)
                        .map(|w| w.unwrap_or_else(|| UNKNOWN_WORD.to_owned()))
                        .collect(),
                );
                return;
            }
        };
        if words.is_empty() {
            return;
        }
    }
}

/// The words after a wrapper's options (and their values, and a `--`).
fn skip_options(program: &str, rest: &[Option<String>]) -> Vec<Option<String>> {
    let with_value = options_with_value(program);
    let mut index = 0;
    while let Some(Some(word)) = rest.get(index) {
        if word == "--" {
            index += 1;
            break;
        }
        if !word.starts_with('-') || word.len() < 2 {
            break;
        }
        index += if with_value.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    rest.get(index..).unwrap_or_default().to_vec()
}

/// The script of `env -S SCRIPT` / `env --split-string=SCRIPT`.
fn split_string(rest: &[Option<String>]) -> Option<String> {
    rest.iter()
        .enumerate()
        .find_map(|(i, word)| match word.as_deref() {
            Some("-S" | "--split-string") => rest.get(i + 1).cloned().flatten(),
            Some(w) => w
                .strip_prefix("--split-string=")
                .or_else(|| w.strip_prefix("-S").filter(|s| !s.is_empty()))
                .map(str::to_owned),
            None => None,
        })
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words joined with spaces, as `eval` does; `None` when one depends on an expansion.
fn join(words: &[Option<String>]) -> Option<String> {
    words
        .iter()
        .cloned()
        .collect::<Option<Vec<_>>>()
        .map(|words| words.join(" "))
}

fn run_script(script: Option<&Option<String>>, sink: &mut dyn Sink) {
    match script {
        Some(Some(script)) => sink.script(script),
        _ => sink.unknown("a script given by an expansion"),
    }
}

/// `sh -c SCRIPT`, or a shell reading its script from a file or stdin (unknown).
fn shell(rest: &[Option<String>], sink: &mut dyn Sink) {
    let mut index = 0;
    let mut has_c = false;
    while let Some(Some(word)) = rest.get(index) {
        if word == "--" {
            index += 1;
            break;
        }
        let is_option = (word.starts_with('-') || word.starts_with('+')) && word.len() > 1;
        if !is_option {
            break;
        }
        if matches!(word.as_str(), "-o" | "+o" | "-O" | "+O") {
            index += 2;
            continue;
        }
        if !word.starts_with("--") && word.contains('c') {
            has_c = true;
        }
        index += 1;
    }
    if has_c {
        run_script(rest.get(index), sink);
    } else {
        sink.unknown("a shell reading its script from a file or stdin");
    }
}

/// `find ... -delete` removes what it finds (as `rm -r -f` would); `-exec CMD ... ;` runs CMD.
fn find(rest: &[Option<String>], sink: &mut dyn Sink) {
    let paths: Vec<String> = rest
        .iter()
        .map_while(|w| {
            w.clone()
                .filter(|w| !w.starts_with('-') && w != "(" && w != "!")
        })
        .collect();
    let mut index = 0;
    while index < rest.len() {
        match rest[index].as_deref() {
            Some("-delete") => sink.command(
                ["rm", "-r", "-f"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(paths.iter().cloned())
                    .collect(),
            ),
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let command: Vec<Option<String>> = rest[index + 1..]
                    .iter()
                    .take_while(|w| !matches!(w.as_deref(), Some(";" | "+")))
                    .cloned()
                    .collect();
                index += command.len();
                if !command.is_empty() {
                    unwrap(command, sink);
                }
            }
            _ => {}
        }
        index += 1;
    }
}

/// A command or a rule as a program, a set of flags and the other words in order.
#[derive(Debug, PartialEq, Eq)]
struct Normal {
    program: String,
    flags: Vec<String>,
    operands: Vec<String>,
}

fn normalise(words: &[String]) -> Option<Normal> {
    let (first, rest) = words.split_first()?;
    let program = first.rsplit('/').next().unwrap_or(first).to_owned();
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    for word in rest {
        if options_done || word == "-" || !word.starts_with('-') {
            operands.push(word.clone());
        } else if word == "--" {
            options_done = true;
        } else if let Some(long) = word.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            flags.push(alias(&program, name).to_owned());
        } else {
            for short in word.chars().skip(1) {
                flags.push(alias(&program, &short.to_string()).to_owned());
            }
        }
    }
    flags.sort();
    flags.dedup();
    Some(Normal {
        program,
        flags,
        operands,
    })
}

/// Flags that mean the same as another, per program.
fn alias<'a>(program: &str, flag: &'a str) -> &'a str {
    match (program, flag) {
        ("rm" | "cp" | "chmod" | "chown", "R" | "recursive") => "r",
        ("rm" | "cp" | "mv" | "ln", "force") => "f",
        ("git", "force") => "f",
        _ => flag,
    }
}

/// Whether a command runs what a rule names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// It does.
    Yes,
    /// It may: the program is the rule's, and what is missing may be in a word given by an
    /// expansion or a pattern.
    Maybe,
    /// It does not.
    No,
}

/// Whether `command` runs what `rule` names: the same program, at least the rule's flags in any
/// order or grouping, and the rule's other words in order among the command's.
pub(crate) fn runs(command: &[String], rule: &[String]) -> Match {
    let (Some(command), Some(rule)) = (normalise(command), normalise(rule)) else {
        return Match::No;
    };
    if command.program != rule.program {
        return Match::No;
    }
    let flags = rule.flags.iter().all(|f| command.flags.contains(f));
    let mut operands = command.operands.iter();
    let words = rule
        .operands
        .iter()
        .all(|wanted| operands.any(|given| given == wanted));
    if flags && words {
        Match::Yes
    } else if command.operands.iter().any(|w| w == UNKNOWN_WORD) {
        Match::Maybe
    } else {
        Match::No
    }
}
