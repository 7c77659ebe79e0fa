//! What a shell script runs, as far as it can be told without running it: every simple command
//! of the parsed script (`brush-parser`), its words expanded as far as they can be
//! (`rules/words.rs`), looking through the commands that run another command (`sh -c`, `eval`,
//! `xargs`, `env`, `timeout`, `find -exec`, `trap`, an alias, ...) and into command and process
//! substitutions, `[[ ]]` and arithmetic. What cannot be known is said: a script read from a
//! file (`source`, `.`, `BASH_ENV`), a variable that makes a shell run code (`PS4`,
//! `PROMPT_COMMAND`, `LD_PRELOAD`), arithmetic reading a variable set at run time (which runs
//! `a[$(cmd)]` held in it), a value hiding a command in a subscript. The deny rules of
//! `bash(...)` are matched against each command.

use std::collections::HashMap;

use brush_parser::ast::{
    AssignmentName, AssignmentValue, Command, CommandPrefixOrSuffixItem, CompoundCommand,
    CompoundList, ExtendedTestExpr, IoFileRedirectTarget, IoRedirect, Pipeline, Program,
    SimpleCommand,
};
use brush_parser::{Parser, ParserOptions};

use super::words::{arithmetic, expand};

/// How deep scripts inside scripts (`sh -c "eval '...'"`) are followed before giving up.
const MAX_DEPTH: usize = 8;

/// The commands of a script.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Commands {
    /// Each command that runs, as its words (program first).
    pub(crate) commands: Vec<Vec<String>>,
    /// Why some of what runs cannot be known (a script that does not parse, a program named by
    /// an expansion, a shell reading its script from stdin or a file); `None` when all is known.
    pub(crate) unknown: Option<String>,
    /// Variables read in arithmetic (where a value like `a[$(cmd)]` runs `cmd`).
    pub(crate) arithmetic_names: Vec<String>,
    /// Variables given values only known at run time.
    pub(crate) tainted: Vec<String>,
    /// Aliases defined so far, by name.
    pub(crate) aliases: HashMap<String, String>,
}

impl Commands {
    /// Records that some of what the script runs cannot be known (the first reason is kept).
    pub(crate) fn mark_unknown(&mut self, why: impl Into<String>) {
        self.unknown.get_or_insert_with(|| why.into());
    }
}

impl super::words::Found for Commands {
    fn unknown(&mut self, why: String) {
        self.mark_unknown(why);
    }

    fn arithmetic_name(&mut self, name: String) {
        self.arithmetic_names.push(name);
    }

    fn script(&mut self, script: &str, depth: usize) {
        walk_script(script, depth, self);
    }
}

/// The commands `script` runs.
pub(crate) fn commands(script: &str) -> Commands {
    let mut found = Commands::default();
    walk_script(script, 0, &mut found);
    if found
        .arithmetic_names
        .iter()
        .any(|name| found.tainted.contains(name) || found.tainted.iter().any(|t| t == "*"))
    {
        found.mark_unknown("arithmetic reads a variable set at run time, which may hold a command");
    }
    found
}

/// Whether a value hides a command in an array subscript, which arithmetic runs when it reads
/// the value (`'a[$(rm -rf ~)]'`).
fn hides_command(value: &str) -> bool {
    value
        .find('[')
        .is_some_and(|at| value[at..].contains("$(") || value[at..].contains('`'))
}

/// Collects what the commands of a script `depth` levels deep run.
struct Walk<'a> {
    depth: usize,
    found: &'a mut Commands,
}

impl super::wrappers::Sink for Walk<'_> {
    fn command(&mut self, words: Vec<String>) {
        builtin(&words, self.depth, self.found);
        self.found.commands.push(words);
    }

    fn unknown(&mut self, why: &str) {
        self.found.mark_unknown(why);
    }

    fn script(&mut self, script: &str) {
        walk_script(script, self.depth + 1, self.found);
    }
}

/// What the builtins among the commands run or change: `trap` runs its action, `source` and
/// `.` a file, `let` arithmetic, `alias` defines what a name runs, `declare -i` makes values
/// arithmetic, `read` and the like set variables at run time.
fn builtin(words: &[String], depth: usize, found: &mut Commands) {
    let unknown = |word: &String| word == super::wrappers::UNKNOWN_WORD;
    let Some((program, args)) = words.split_first() else {
        return;
    };
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match program.as_str() {
        "trap" => match operands.first() {
            Some(action) if unknown(action) => found.mark_unknown("a trap given by an expansion"),
            Some(action) if operands.len() > 1 && action.as_str() != "-" => {
                walk_script(action, depth + 1, found);
            }
            _ => {}
        },
        "source" | "." => found.mark_unknown("a script read from a file"),
        "enable" => found.mark_unknown("a builtin loaded from a file"),
        "let" => {
            for arg in args {
                arithmetic(arg, depth, found);
            }
        }
        "alias" => {
            for arg in args {
                match arg.split_once('=') {
                    Some((name, value)) => {
                        found.aliases.insert(name.to_owned(), value.to_owned());
                    }
                    None if unknown(arg) => found.mark_unknown("an alias given by an expansion"),
                    None => {}
                }
            }
        }
        "declare" | "typeset" | "local" | "export" | "readonly" => {
            let integer = args.iter().any(|a| a.starts_with('-') && a.contains('i'));
            for operand in operands {
                let (name, value) = operand.split_once('=').unwrap_or((operand, ""));
                assigned(
                    name,
                    Some(value).filter(|v| !unknown(&(*v).to_owned())),
                    found,
                );
                if integer {
                    arithmetic(value, depth, found);
                }
            }
        }
        "read" | "mapfile" | "readarray" | "getopts" => {
            found
                .tainted
                .extend(operands.iter().map(|name| (*name).clone()));
            if operands.is_empty() || program == "getopts" {
                found.tainted.push("*".to_owned());
            }
        }
        "printf" | "wait" => {
            if let Some(at) = args.iter().position(|a| a == "-v" || a == "-p") {
                match args.get(at + 1) {
                    Some(name) => found.tainted.push(name.clone()),
                    None => found.tainted.push("*".to_owned()),
                }
            }
        }
        _ => {}
    }
}

/// A variable set to `value` (`None`: known only at run time).
fn assigned(name: &str, value: Option<&str>, found: &mut Commands) {
    let name = name.split('[').next().unwrap_or(name);
    if super::wrappers::RUNS_CODE.contains(&name) || name.starts_with("BASH_FUNC_") {
        found.mark_unknown(format!("{name} makes a shell or program run code it names"));
    }
    match value {
        Some(value) if hides_command(value) => {
            found.mark_unknown("a value hides a command in a subscript, which arithmetic runs");
        }
        Some(_) => {}
        None => found.tainted.push(name.to_owned()),
    }
}

pub(crate) fn walk_script(script: &str, depth: usize, found: &mut Commands) {
    if depth > MAX_DEPTH {
        found.mark_unknown("scripts nested too deep");
        return;
    }
    let options = ParserOptions::default();
    let mut parser = Parser::new(std::io::BufReader::new(script.as_bytes()), &options);
    match parser.parse_program() {
        Ok(program) => walk_program(&program, depth, found),
        Err(error) => found.mark_unknown(format!("the command cannot be parsed: {error}")),
    }
}

fn walk_program(program: &Program, depth: usize, found: &mut Commands) {
    for list in &program.complete_commands {
        walk_list(list, depth, found);
    }
}

fn walk_list(list: &CompoundList, depth: usize, found: &mut Commands) {
    for item in &list.0 {
        walk_pipeline(&item.0.first, depth, found);
        for next in &item.0.additional {
            let (brush_parser::ast::AndOr::And(pipeline) | brush_parser::ast::AndOr::Or(pipeline)) =
                next;
            walk_pipeline(pipeline, depth, found);
        }
    }
}

fn walk_pipeline(pipeline: &Pipeline, depth: usize, found: &mut Commands) {
    for command in &pipeline.seq {
        walk_command(command, depth, found);
    }
}

fn walk_command(command: &Command, depth: usize, found: &mut Commands) {
    match command {
        Command::Simple(simple) => walk_simple(simple, depth, found),
        Command::Compound(compound, redirects) => {
            walk_compound(compound, depth, found);
            for redirect in redirects.iter().flat_map(|list| &list.0) {
                walk_redirect(redirect, depth, found);
            }
        }
        Command::Function(function) => walk_compound(&function.body.0, depth, found),
        // `[[ ... ]]` runs the substitutions in its words; its numeric comparisons are
        // arithmetic.
        Command::ExtendedTest(test, _) => walk_test(&test.expr, depth, found),
    }
}

fn walk_test(test: &ExtendedTestExpr, depth: usize, found: &mut Commands) {
    match test {
        ExtendedTestExpr::And(left, right) | ExtendedTestExpr::Or(left, right) => {
            walk_test(left, depth, found);
            walk_test(right, depth, found);
        }
        ExtendedTestExpr::Not(inner) | ExtendedTestExpr::Parenthesized(inner) => {
            walk_test(inner, depth, found);
        }
        ExtendedTestExpr::UnaryTest(_, word) => {
            let _ = expand(&word.value, depth, found);
        }
        ExtendedTestExpr::BinaryTest(predicate, left, right) => {
            let numeric = format!("{predicate:?}").starts_with("Arithmetic");
            for word in [left, right] {
                let words = expand(&word.value, depth, found);
                if numeric {
                    arithmetic(&word.value, depth, found);
                    for text in words.into_iter().flatten() {
                        if hides_command(&text) {
                            found.mark_unknown("a value hides a command in a subscript");
                        }
                    }
                }
            }
        }
    }
}

fn walk_compound(compound: &CompoundCommand, depth: usize, found: &mut Commands) {
    match compound {
        CompoundCommand::BraceGroup(group) => walk_list(&group.list, depth, found),
        CompoundCommand::Subshell(subshell) => walk_list(&subshell.list, depth, found),
        CompoundCommand::ForClause(clause) => {
            for word in clause.values.iter().flatten() {
                if expand(&word.value, depth, found)
                    .iter()
                    .any(Option::is_none)
                {
                    found.tainted.push(clause.variable_name.clone());
                }
            }
            walk_list(&clause.body.list, depth, found);
        }
        CompoundCommand::CaseClause(clause) => {
            let _ = expand(&clause.value.value, depth, found);
            for case in &clause.cases {
                if let Some(list) = &case.cmd {
                    walk_list(list, depth, found);
                }
            }
        }
        CompoundCommand::IfClause(clause) => {
            walk_list(&clause.condition, depth, found);
            walk_list(&clause.then, depth, found);
            for other in clause.elses.iter().flatten() {
                if let Some(condition) = &other.condition {
                    walk_list(condition, depth, found);
                }
                walk_list(&other.body, depth, found);
            }
        }
        CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
            walk_list(&clause.0, depth, found);
            walk_list(&clause.1.list, depth, found);
        }
        CompoundCommand::ArithmeticForClause(clause) => {
            for part in [&clause.initializer, &clause.condition, &clause.updater]
                .into_iter()
                .flatten()
            {
                arithmetic(&part.value, depth, found);
            }
            walk_list(&clause.body.list, depth, found);
        }
        CompoundCommand::Coprocess(coprocess) => walk_command(&coprocess.body, depth, found),
        CompoundCommand::Arithmetic(command) => arithmetic(&command.expr.value, depth, found),
    }
}

fn walk_redirect(redirect: &IoRedirect, depth: usize, found: &mut Commands) {
    match redirect {
        IoRedirect::File(_, _, target) => match target {
            IoFileRedirectTarget::Filename(word) | IoFileRedirectTarget::Duplicate(word) => {
                let _ = expand(&word.value, depth, found);
            }
            IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                walk_list(&subshell.list, depth, found);
            }
            IoFileRedirectTarget::Fd(_) => {}
        },
        IoRedirect::HereString(_, word) | IoRedirect::OutputAndError(word, _) => {
            let _ = expand(&word.value, depth, found);
        }
        IoRedirect::HereDocument(_, doc) => {
            if doc.requires_expansion {
                let _ = expand(&doc.doc.value, depth, found);
            }
        }
    }
}

/// An item of a simple command; an assignment after the program (`alias x=...`, `declare
/// y=...`) is also one of its words.
fn walk_item(
    item: &CommandPrefixOrSuffixItem,
    argument: bool,
    depth: usize,
    found: &mut Commands,
    words: &mut Vec<Option<String>>,
) {
    match item {
        CommandPrefixOrSuffixItem::Word(word) => {
            words.extend(expand(&word.value, depth, found));
        }
        CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
            let name = match &assignment.name {
                AssignmentName::VariableName(name) => name.clone(),
                AssignmentName::ArrayElementName(name, index) => {
                    arithmetic(index, depth, found);
                    name.clone()
                }
            };
            let value = match &assignment.value {
                AssignmentValue::Scalar(value) => expand(&value.value, depth, found)
                    .into_iter()
                    .next()
                    .flatten(),
                AssignmentValue::Array(_) => {
                    let _ = expand(&word.value, depth, found);
                    None
                }
            };
            assigned(&name, value.as_deref(), found);
            if argument {
                words.push(value.map(|value| format!("{name}={value}")));
            }
        }
        CommandPrefixOrSuffixItem::IoRedirect(redirect) => walk_redirect(redirect, depth, found),
        CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
            walk_list(&subshell.list, depth, found);
        }
    }
}

fn walk_simple(simple: &SimpleCommand, depth: usize, found: &mut Commands) {
    let prefix = simple.prefix.iter().flat_map(|prefix| &prefix.0);
    let suffix = simple.suffix.iter().flat_map(|suffix| &suffix.0);
    let mut words: Vec<Option<String>> = Vec::new();
    for item in prefix {
        walk_item(item, false, depth, found, &mut words);
    }
    if let Some(word) = &simple.word_or_name {
        words.extend(expand(&word.value, depth, found));
    }
    for item in suffix {
        walk_item(item, true, depth, found, &mut words);
    }
    // An alias runs its text followed by the command's other words.
    if let Some(Some(first)) = words.first()
        && let Some(text) = found.aliases.get(first).cloned()
    {
        let rest: Vec<String> = words[1..]
            .iter()
            .map(|word| match word {
                Some(word) => format!("'{}'", word.replace('\'', "'\\''")),
                None => "\"$UNKNOWN\"".to_owned(),
            })
            .collect();
        walk_script(&format!("{text} {}", rest.join(" ")), depth + 1, found);
        return;
    }
    if !words.is_empty() {
        super::wrappers::unwrap(words, &mut Walk { depth, found });
    }
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
