//! What a shell script runs, as far as it can be told without running it: every simple command
//! of the parsed script (`brush-parser`), with quotes and escapes removed, looking through the
//! commands that run another command (`sh -c`, `eval`, `xargs`, `env`, `timeout`, `find -exec`,
//! ...) and into command and process substitutions. The deny rules of `bash(...)` are matched
//! against each of them.

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectTarget,
    IoRedirect, Pipeline, Program, SimpleCommand,
};
use brush_parser::word::WordPiece;
use brush_parser::{Parser, ParserOptions};

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
}

impl Commands {
    /// Records that some of what the script runs cannot be known (the first reason is kept).
    pub(crate) fn mark_unknown(&mut self, why: impl Into<String>) {
        self.unknown.get_or_insert_with(|| why.into());
    }
}

/// The commands `script` runs.
pub(crate) fn commands(script: &str) -> Commands {
    let mut found = Commands::default();
    walk_script(script, 0, &mut found);
    found
}

/// Collects what the commands of a script `depth` levels deep run.
struct Walk<'a> {
    depth: usize,
    found: &'a mut Commands,
}

impl super::wrappers::Sink for Walk<'_> {
    fn command(&mut self, words: Vec<String>) {
        self.found.commands.push(words);
    }

    fn unknown(&mut self, why: &str) {
        self.found.mark_unknown(why);
    }

    fn script(&mut self, script: &str) {
        walk_script(script, self.depth + 1, self.found);
    }
}

fn walk_script(script: &str, depth: usize, found: &mut Commands) {
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
        // `[[ ... ]]` runs nothing but the substitutions in its words, which are rare there.
        Command::ExtendedTest(..) => {}
    }
}

fn walk_compound(compound: &CompoundCommand, depth: usize, found: &mut Commands) {
    match compound {
        CompoundCommand::BraceGroup(group) => walk_list(&group.list, depth, found),
        CompoundCommand::Subshell(subshell) => walk_list(&subshell.list, depth, found),
        CompoundCommand::ForClause(clause) => {
            for word in clause.values.iter().flatten() {
                expand(&word.value, depth, found);
            }
            walk_list(&clause.body.list, depth, found);
        }
        CompoundCommand::CaseClause(clause) => {
            expand(&clause.value.value, depth, found);
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
        CompoundCommand::ArithmeticForClause(clause) => walk_list(&clause.body.list, depth, found),
        CompoundCommand::Coprocess(coprocess) => walk_command(&coprocess.body, depth, found),
        CompoundCommand::Arithmetic(_) => {}
    }
}

fn walk_redirect(redirect: &IoRedirect, depth: usize, found: &mut Commands) {
    match redirect {
        IoRedirect::File(_, _, target) => match target {
            IoFileRedirectTarget::Filename(word) | IoFileRedirectTarget::Duplicate(word) => {
                expand(&word.value, depth, found);
            }
            IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                walk_list(&subshell.list, depth, found);
            }
            IoFileRedirectTarget::Fd(_) => {}
        },
        IoRedirect::HereString(_, word) | IoRedirect::OutputAndError(word, _) => {
            expand(&word.value, depth, found);
        }
        IoRedirect::HereDocument(_, doc) => {
            if doc.requires_expansion {
                expand(&doc.doc.value, depth, found);
            }
        }
    }
}

fn walk_simple(simple: &SimpleCommand, depth: usize, found: &mut Commands) {
    let items = simple
        .prefix
        .iter()
        .flat_map(|prefix| &prefix.0)
        .chain(simple.suffix.iter().flat_map(|suffix| &suffix.0));
    let mut words: Vec<Option<String>> = Vec::new();
    if let Some(word) = &simple.word_or_name {
        words.push(expand(&word.value, depth, found));
    }
    for item in items {
        match item {
            CommandPrefixOrSuffixItem::Word(word) => words.push(expand(&word.value, depth, found)),
            CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                expand(&word.value, depth, found);
            }
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                walk_redirect(redirect, depth, found);
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                walk_list(&subshell.list, depth, found);
            }
        }
    }
    if !words.is_empty() {
        super::wrappers::unwrap(words, &mut Walk { depth, found });
    }
}

/// The literal text of a word with quotes and escapes removed; `None` when it depends on an
/// expansion. The scripts of its command substitutions are walked.
pub(crate) fn expand(word: &str, depth: usize, found: &mut Commands) -> Option<String> {
    let options = ParserOptions::default();
    let Ok(pieces) = brush_parser::word::parse(word, &options) else {
        found.mark_unknown(format!("the word {word:?} cannot be parsed"));
        return None;
    };
    let mut text = Some(String::new());
    for piece in pieces {
        literal(&piece.piece, depth, found, &mut text);
    }
    text
}

fn literal(piece: &WordPiece, depth: usize, found: &mut Commands, text: &mut Option<String>) {
    let mut push = |s: &str| {
        if let Some(text) = text.as_mut() {
            text.push_str(s);
        }
    };
    match piece {
        WordPiece::Text(s) | WordPiece::SingleQuotedText(s) | WordPiece::AnsiCQuotedText(s) => {
            push(s);
        }
        WordPiece::EscapeSequence(s) => push(s.strip_prefix('\\').unwrap_or(s)),
        WordPiece::TildeExpansion(_) => push("~"),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for piece in inner {
                literal(&piece.piece, depth, found, text);
            }
        }
        WordPiece::CommandSubstitution(script)
        | WordPiece::BackquotedCommandSubstitution(script) => {
            walk_script(script, depth + 1, found);
            *text = None;
        }
        WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => *text = None,
    }
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
