//! What the editor asks about a document once its version is checked:
//! hovers, code actions and the command that shows a range's places;
//! requests waiting for their check, and cancelled ones.

use lsp_server::{ErrorCode, Request, RequestId, Response};
use lsp_types::request::{Request as _, ShowDocument};
use lsp_types::{
    CodeAction, CodeActionOrCommand, CodeActionParams, Command, ExecuteCommandParams, Hover,
    HoverContents, HoverParams, Location, MarkupContent, MarkupKind, NumberOrString,
    ShowDocumentParams, Url,
};

use super::text::{contains, overlaps};
use super::worker::Group;
use super::{Asked, Doc, Pending, Server, MAX_PENDING, SHOW_DUPLICATES};

impl Server<'_> {
    /// The answer to a hover or code action of `uri` now, when the check
    /// of its version has ended (or it is not open); else later, when it
    /// has.
    pub(super) fn answer_when_checked(
        &mut self,
        id: RequestId,
        uri: Url,
        asked: Asked,
    ) -> Option<Response> {
        let pending = Pending { id, uri, asked };
        let waits = self
            .docs
            .get(&pending.uri)
            .is_some_and(|doc| doc.settled != Some(doc.version));
        if waits && self.pending.len() < MAX_PENDING {
            self.pending.push(pending);
            return None;
        }
        Some(self.answer(pending))
    }

    /// The answer to `pending` with what has been published.
    pub(super) fn answer(&self, pending: Pending) -> Response {
        match pending.asked {
            Asked::Hover(p) => Response::new_ok(pending.id, self.hover(&p)),
            Asked::CodeAction(p) => Response::new_ok(pending.id, self.code_actions(&p)),
        }
    }

    /// Answers the requests waiting for `uri` (checked, or closed).
    pub(super) fn answer_pending(&mut self, uri: &Url) {
        let (due, waiting): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| &p.uri == uri);
        self.pending = waiting;
        for pending in due {
            let response = self.answer(pending);
            self.send(response);
        }
    }

    /// `$/cancelRequest`: a request still waiting is answered
    /// `RequestCanceled`; one answered already is left alone.
    pub(super) fn cancel(&mut self, id: NumberOrString) {
        let id = match id {
            NumberOrString::Number(n) => RequestId::from(n),
            NumberOrString::String(s) => RequestId::from(s),
        };
        if let Some(at) = self.pending.iter().position(|p| p.id == id) {
            self.pending.remove(at);
            self.send(Response::new_err(
                id,
                ErrorCode::RequestCanceled as i32,
                "The request was cancelled".into(),
            ));
        }
    }

    /// The duplicated ranges of the document published for its current
    /// version.
    pub(super) fn groups(&self, uri: &Url) -> &[Group] {
        match self.docs.get(uri) {
            Some(Doc {
                version,
                published: Some((checked, groups)),
                ..
            }) if version == checked => groups,
            _ => &[],
        }
    }

    fn hover(&self, params: &HoverParams) -> Option<Hover> {
        let at = &params.text_document_position_params;
        let group = self
            .groups(&at.text_document.uri)
            .iter()
            .find(|g| contains(g.range(), at.position))?;
        let renaming =
            (group.first_renaming.as_ref()).map_or(String::new(), |r| format!(", renaming {r}"));
        let symbol = (group.first_symbol.as_ref()).map_or(String::new(), |s| format!("{s} in "));
        let mut value = format!(
            "**Duplicates** {symbol}`{}` ({} tokens{renaming})\n\n```{}\n{}\n```",
            group.first_name, group.first_tokens, group.language, group.first_fragment
        );
        let others = group
            .diagnostic
            .related_information
            .iter()
            .flatten()
            .skip(1);
        for (i, other) in others.enumerate() {
            if i == 0 {
                value.push_str("\n\nAnd also:");
            }
            value.push_str(&format!("\n- `{}`", other.message));
        }
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            }),
            range: Some(*group.range()),
        })
    }

    fn code_actions(&self, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &params.text_document.uri;
        self.groups(uri)
            .iter()
            .filter(|g| overlaps(g.range(), &params.range))
            .map(|g| {
                let n = g.places.len();
                let title = if n == 1 {
                    "Show the duplicate".to_owned()
                } else {
                    format!("Show all {n} duplicates")
                };
                let here = Location::new(uri.clone(), *g.range());
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    diagnostics: Some(vec![g.diagnostic.clone()]),
                    command: Some(Command {
                        title,
                        command: SHOW_DUPLICATES.to_owned(),
                        arguments: Some(vec![
                            serde_json::to_value(here).unwrap_or_default(),
                            serde_json::to_value(&g.places).unwrap_or_default(),
                        ]),
                    }),
                    ..CodeAction::default()
                })
            })
            .collect()
    }

    /// `dupcheck.showDuplicates [here, places]`: opens the first place
    /// (`window/showDocument`, when the client supports it) and answers the
    /// places.
    pub(super) fn execute(
        &mut self,
        params: ExecuteCommandParams,
    ) -> Result<Vec<Location>, String> {
        if params.command != SHOW_DUPLICATES {
            return Err(format!(
                "Unknown command {:?}; the server has {SHOW_DUPLICATES}",
                params.command
            ));
        }
        let places: Vec<Location> = params
            .arguments
            .get(1)
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| {
                format!("{SHOW_DUPLICATES} takes two arguments: the duplicated range's Location and its places' Locations")
            })?;
        if let (true, Some(first)) = (self.show_document, places.first()) {
            self.requests += 1;
            let params = ShowDocumentParams {
                uri: first.uri.clone(),
                external: None,
                take_focus: Some(true),
                selection: Some(first.range),
            };
            self.send(Request::new(
                RequestId::from(format!("dupcheck-{}", self.requests)),
                ShowDocument::METHOD.to_owned(),
                params,
            ));
        }
        Ok(places)
    }
}
