//! The interaction model every front end shares — the line mode, the full-screen UI, an
//! editor over ACP and the HTTP API ask people the same questions by the same rules:
//!
//! - [`approvals`]: a session's answers to risky calls ([`SessionApprovals`]). An "always"
//!   answer covers later calls, except a call a deny rule cannot check (a `bash` script whose
//!   programs cannot all be known): that one is always asked, with the warning, and never
//!   remembered into "always"; where nobody can be asked it is refused. A rerun without the
//!   sandbox is offered only for a command a person approved in its own question.
//! - [`form`]: the typed form of a server's question to a person (MCP elicitation): its
//!   fields, how a typed answer becomes a value, and the check of a filled-in form.
//! - [`slash`]: the slash commands of a chat, parsed once.
//! - [`notify`]: how a terminal front end notifies the person ([`TerminalNotify`]) and when.
//! - [`shells`]: `/shells`, the run's background shells as a person sees them, and stopping one.
//!
//! Nothing here draws, prints or reads a terminal (a notification is bytes the front end
//! writes): a front end shows the [`Question`] or the
//! [`Form`] its own way and hands the person's answer back.

pub mod approvals;
pub mod form;
pub mod notify;
pub mod shells;
pub mod slash;

pub use approvals::{Answer, Check, Question, SessionApprovals};
pub use form::{Choice, Field, FieldKind, Form};
pub use notify::TerminalNotify;
pub use slash::{ForkAt, SlashCommand};
