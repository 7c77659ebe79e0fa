//! Code highlighted by language, one line at a time: keywords, strings, numbers and comments
//! of the languages a model writes most, found by a small lexer per family (C-like, shell-like,
//! SQL-like). A line is highlighted alone, so a block comment or a string that spans lines is
//! coloured only on the line it starts; a language it does not know keeps one colour, with
//! whole-line comments dimmed.

use ratatui::style::{Color, Modifier, Style};

/// How a language's lines are read.
struct Syntax {
    /// What starts a comment that runs to the end of the line.
    comments: &'static [&'static str],
    /// Characters that open (and close) a string.
    quotes: &'static [char],
    /// Its keywords (and literal words such as `true`).
    keywords: &'static [&'static str],
}

const RUST: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "Some", "None", "Ok", "Err",
];
const PYTHON: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while",
    "with", "yield", "self",
];
const JAVASCRIPT: &[&str] = &[
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "of",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "yield",
];
const GO: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "false",
    "for",
    "func",
    "go",
    "if",
    "import",
    "interface",
    "map",
    "nil",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "true",
    "type",
    "var",
];
const C: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "if",
    "include",
    "int",
    "long",
    "namespace",
    "new",
    "nullptr",
    "private",
    "public",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "true",
    "typedef",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "while",
    "final",
    "import",
    "package",
    "extends",
    "implements",
    "null",
    "boolean",
];
const SHELL: &[&str] = &[
    "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if", "in",
    "local", "return", "then", "until", "while", "echo", "cd", "set", "unset", "exit",
];
const SQL: &[&str] = &[
    "select",
    "from",
    "where",
    "insert",
    "into",
    "values",
    "update",
    "set",
    "delete",
    "create",
    "table",
    "index",
    "drop",
    "alter",
    "join",
    "left",
    "right",
    "inner",
    "outer",
    "on",
    "group",
    "by",
    "order",
    "having",
    "limit",
    "and",
    "or",
    "not",
    "null",
    "as",
    "distinct",
    "primary",
    "key",
    "references",
    "default",
    "begin",
    "commit",
    "union",
    "case",
    "when",
    "then",
    "else",
    "end",
    "is",
    "in",
    "exists",
    "local",
    "function",
    "if",
    "return",
    "nil",
    "true",
    "false",
];
const DATA: &[&str] = &["true", "false", "null"];

/// The syntax of a fence's language tag, if it is one this knows.
fn syntax(language: &str) -> Option<Syntax> {
    let c_like = |keywords| Syntax {
        comments: &["//"],
        quotes: &['"', '\'', '`'],
        keywords,
    };
    let hash = |keywords| Syntax {
        comments: &["#"],
        quotes: &['"', '\''],
        keywords,
    };
    let tag = language.trim().to_ascii_lowercase();
    Some(match tag.as_str() {
        // A `'` in Rust is mostly a lifetime or a char; strings are `"`.
        "rust" | "rs" => Syntax {
            comments: &["//"],
            quotes: &['"'],
            keywords: RUST,
        },
        "python" | "py" => hash(PYTHON),
        "javascript" | "js" | "jsx" | "typescript" | "ts" | "tsx" | "mjs" => c_like(JAVASCRIPT),
        "go" | "golang" => c_like(GO),
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "kt" | "csharp" | "cs"
        | "swift" | "scala" => c_like(C),
        "sh" | "bash" | "zsh" | "shell" | "console" | "fish" => hash(SHELL),
        "sql" | "lua" => Syntax {
            comments: &["--"],
            quotes: &['\'', '"'],
            keywords: SQL,
        },
        "toml" | "yaml" | "yml" | "ini" => hash(DATA),
        "json" | "jsonc" => c_like(DATA),
        _ => return None,
    })
}

/// The colour of plain code.
pub(crate) fn code_style() -> Style {
    Style::new().fg(Color::Cyan)
}

/// The look of a comment.
pub(crate) fn comment_style() -> Style {
    Style::new()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

fn keyword_style() -> Style {
    Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

fn string_style() -> Style {
    Style::new().fg(Color::Green)
}

fn number_style() -> Style {
    Style::new().fg(Color::Yellow)
}

/// `text` (one line of a code block in `language`) as pieces of text with their style.
pub(crate) fn line(language: &str, text: &str) -> Vec<(String, Style)> {
    let Some(syntax) = syntax(language) else {
        let trimmed = text.trim_start();
        let comment = ["//", "#", "--", "/*", "*"]
            .iter()
            .any(|start| trimmed.starts_with(start));
        let style = if comment {
            comment_style()
        } else {
            code_style()
        };
        return vec![(text.to_owned(), style)];
    };
    let sql = syntax.comments == ["--"];
    let mut pieces: Vec<(String, Style)> = Vec::new();
    let mut push = |piece: &str, style: Style| match pieces.last_mut() {
        Some((last, last_style)) if *last_style == style => last.push_str(piece),
        _ => pieces.push((piece.to_owned(), style)),
    };
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if syntax.comments.iter().any(|start| rest.starts_with(start)) {
            push(rest, comment_style());
            break;
        }
        if syntax.quotes.contains(&c) {
            // To the closing quote not escaped by a backslash, or the end of the line.
            let mut end = rest.len();
            let mut escaped = false;
            for (at, d) in rest.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    end = at + d.len_utf8();
                    break;
                }
            }
            push(&rest[..end], string_style());
            rest = &rest[end..];
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let end = rest
                .find(|d: char| {
                    !(d.is_alphanumeric() || d == '_' || (c.is_ascii_digit() && d == '.'))
                })
                .unwrap_or(rest.len());
            let word = &rest[..end];
            let style = if c.is_ascii_digit() {
                number_style()
            } else if syntax.keywords.contains(&word)
                || (sql
                    && syntax
                        .keywords
                        .contains(&word.to_ascii_lowercase().as_str()))
            {
                keyword_style()
            } else {
                code_style()
            };
            push(word, style);
            rest = &rest[end..];
            continue;
        }
        push(&rest[..c.len_utf8()], code_style());
        rest = &rest[c.len_utf8()..];
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(language: &str, text: &str, word: &str) -> Style {
        line(language, text)
            .into_iter()
            .find(|(piece, _)| piece.contains(word))
            .map(|(_, style)| style)
            .unwrap_or_else(|| panic!("{word:?} not in {text:?}"))
    }

    #[test]
    fn keywords_strings_numbers_and_comments_are_told_apart_by_language() {
        let rust = r#"pub fn main() { let x = "fn"; 42 } // done"#;
        assert_eq!(styled("rust", rust, "pub"), keyword_style());
        assert_eq!(styled("rust", rust, "main"), code_style());
        assert_eq!(styled("rust", rust, "\"fn\""), string_style());
        assert_eq!(styled("rust", rust, "42"), number_style());
        assert_eq!(styled("rust", rust, "// done"), comment_style());
        // The pieces put together are the line.
        let joined: String = line("rust", rust).into_iter().map(|(p, _)| p).collect();
        assert_eq!(joined, rust);

        let python = "def f(x):  # 'not a string'";
        assert_eq!(styled("py", python, "def"), keyword_style());
        assert_eq!(styled("py", python, "# 'not"), comment_style());
        assert_eq!(styled("sh", "echo \"a \\\" b\" | wc", "wc"), code_style());
        assert_eq!(styled("sql", "SELECT id FROM t", "SELECT"), keyword_style());
        assert_eq!(styled("ts", "const s = `x`", "`x`"), string_style());
    }

    #[test]
    fn an_unknown_language_keeps_one_colour_and_dims_whole_line_comments() {
        assert_eq!(
            line("brainfuck", "fn 42"),
            vec![("fn 42".into(), code_style())]
        );
        assert_eq!(line("", "# note"), vec![("# note".into(), comment_style())]);
    }
}
