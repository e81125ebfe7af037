//! The service: the calls every interface makes, over the current
//! snapshot of the project and, with a store, every other repository in
//! it ([`across`]). Check a snippet ([`check`]), a diff
//! ([`diff_check`]) or an editor's open buffer ([`open_check`]); list the
//! project's clones and one clone ([`clones`]); its folder tree ([`tree`]).
//! Answers are plain data, made of one [`answer::Place`] and one
//! [`answer::Duplication`] ([`findings`] is the neutral form every report
//! renders); the interfaces decode requests, call these and render.
//!
//! Arrows point down: the service reads `project` (config, snapshot,
//! buffers), `store` (other repositories) and `engine` (tokens,
//! matching), never an interface.

/// A check's part that the store answers: other repositories' places.
pub mod across;
/// The answer types every call shares: one `Place`, one `Duplication`.
pub mod answer;
/// One snippet checked within its budgets; admission of checks.
pub mod check;
/// The project's clones, filtered and paged, and one clone in detail.
pub mod clones;
/// One diff checked: the duplications its added lines make.
pub mod diff_check;
/// Findings: the one neutral form of a duplication every report renders.
pub mod findings;
/// A diff's changes to one copy of a clone that another copy lacks.
pub mod inconsistent;
/// An editor's buffer checked among its other open buffers.
pub mod open_check;
/// The folder tree: one folder's children with their duplication.
pub mod tree;
/// The workspace every interface starts, and the calls it makes on it.
pub mod workspace;
