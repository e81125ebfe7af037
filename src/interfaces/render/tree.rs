//! The JSON of the folder tree (`GET /api/tree`): the service's plain
//! [`Folder`] as it is sent, with its OpenAPI schema.

use serde::Serialize;
use utoipa::ToSchema;

use super::stats::PercentJson;
use crate::service::tree::{Folder, Kind, Node};

/// A folder and one page of its children.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Folder)]
pub(crate) struct FolderJson {
    /// The folder's own figures (its `path` is the one asked for).
    pub folder: NodeJson,
    /// Its children (folders and files), most lines first, then by name.
    pub children: Vec<NodeJson>,
    /// Children of the folder, on every page.
    pub total_children: usize,
    /// The `offset` of the next page; `null` on the last.
    #[schema(required = true)]
    pub next_offset: Option<usize>,
}

impl From<&Folder> for FolderJson {
    fn from(v: &Folder) -> FolderJson {
        FolderJson {
            folder: (&v.folder).into(),
            children: v.children.iter().map(Into::into).collect(),
            total_children: v.total_children,
            next_offset: v.next_offset,
        }
    }
}

/// What a node of the tree is.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = Kind)]
pub(crate) enum KindJson {
    /// A folder: its figures sum its files'.
    Folder,
    /// A file of the index.
    File,
}

impl From<&Kind> for KindJson {
    fn from(v: &Kind) -> KindJson {
        match v {
            Kind::Folder => KindJson::Folder,
            Kind::File => KindJson::File,
        }
    }
}

/// A folder or file with its figures.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = TreeNode)]
pub(crate) struct NodeJson {
    /// Its last path segment (empty for the top folder).
    pub name: String,
    /// Relative to DIR, `/`-separated (empty for the top folder).
    pub path: String,
    /// A folder or a file.
    pub kind: KindJson,
    /// Files in it (1 for a file).
    pub files: u64,
    /// Lines, as an editor counts them.
    pub lines: u64,
    /// Lines inside at least one clone.
    pub duplicated_lines: u64,
    /// `duplicatedLines` of `lines`, in percent.
    pub percentage: PercentJson,
    /// Clones with a place in it.
    pub clones: u64,
    /// For a file, its format; `null` for a folder.
    #[schema(required = true)]
    pub format: Option<String>,
}

impl From<&Node> for NodeJson {
    fn from(v: &Node) -> NodeJson {
        NodeJson {
            name: v.name.clone(),
            path: v.path.clone(),
            kind: (&v.kind).into(),
            files: v.files,
            lines: v.lines,
            duplicated_lines: v.duplicated_lines,
            percentage: (&v.percentage).into(),
            clones: v.clones,
            format: v.format.clone(),
        }
    }
}
