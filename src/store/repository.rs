//! A repository's name in the store: `--repository NAME`, or by default
//! the `origin` remote normalised as `host/org/repo` (credentials, scheme,
//! port and `.git` dropped), else the directory's name; and which names
//! the store takes ([`validate`]).
//!
//! Invariant: a name is stored as data, whatever it holds (quotes,
//! semicolons): statements take it as a parameter. Names with control
//! characters (NUL among them) or longer than [`MAX_NAME`] bytes are
//! refused with one line.

use std::path::Path;

use super::error::StoreError;

/// The longest name taken, in bytes.
pub const MAX_NAME: usize = 512;

/// The name of the repository at `dir`: its `origin` remote's, else the
/// directory's.
pub fn default_name(dir: &Path) -> String {
    let remote = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["config", "--get", "remote.origin.url"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok());
    remote
        .as_deref()
        .and_then(normalise_remote)
        .unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into())
        })
}

/// `host/org/repo` of a git remote URL (`https://`, `ssh://`, scp-like
/// `git@host:org/repo.git`), without credentials, port or `.git`.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let (host_part, path) = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/')?,
        // scp-like: user@host:path (a local path has no colon before a slash).
        None => {
            let (host, path) = url.split_once(':')?;
            if host.contains('/') {
                return None;
            }
            (host, path)
        }
    };
    let host = host_part.rsplit('@').next()?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{host}/{path}"))
}

/// `name` if the store takes it as a repository's name.
pub fn validate(name: &str) -> Result<&str, StoreError> {
    if name.trim().is_empty() {
        return Err(StoreError::Refused(
            "--repository: a repository's name cannot be empty".into(),
        ));
    }
    if name.len() > MAX_NAME {
        return Err(StoreError::Refused(format!(
            "--repository: a repository's name is at most {MAX_NAME} bytes; this one has {}",
            name.len()
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(StoreError::Refused(
            "--repository: a repository's name cannot hold control characters (NUL, newlines, tabs)"
                .into(),
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_normalise_to_host_org_repo() {
        for (url, name) in [
            ("https://github.com/org/repo.git\n", "github.com/org/repo"),
            (
                "https://user:token@GitHub.com/org/repo",
                "github.com/org/repo",
            ),
            ("git@github.com:org/repo.git", "github.com/org/repo"),
            (
                "ssh://git@gitlab.example:2222/group/sub/repo.git",
                "gitlab.example/group/sub/repo",
            ),
        ] {
            assert_eq!(normalise_remote(url).as_deref(), Some(name), "{url}");
        }
        assert_eq!(normalise_remote("/srv/git/repo.git"), None);
        assert_eq!(normalise_remote("../repo"), None);
    }

    #[test]
    fn names_with_control_characters_or_too_long_are_refused() {
        assert!(validate("x'; DROP TABLE repositories; --").is_ok());
        assert!(validate("a\0b").is_err());
        assert!(validate("a\nb").is_err());
        assert!(validate("").is_err());
        let long = "n".repeat(10_000);
        assert_eq!(
            validate(&long).unwrap_err().to_string(),
            "--repository: a repository's name is at most 512 bytes; this one has 10000"
        );
    }

    #[test]
    fn the_default_is_the_directory_without_a_remote() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("my-project");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(default_name(&sub), "my-project");
    }
}
