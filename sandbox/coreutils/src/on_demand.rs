//! Commands whose code a host may supply on first use: `awk` and `jq`, the two largest in the
//! table (together about a seventh of the playground's agent chunk).
//!
//! A build with `--cfg tether_split_commands` (the playground's `cargo xtask dist`) leaves them
//! out of the table, so nothing the shell reaches refers to their code and the wasm splitter
//! moves it into chunks of its own. The host registers a [`Loader`] with [`set_loader`]; the
//! shell awaits [`load`] the first time a script runs one of them (whatever the route: a simple
//! command, a pipeline stage, `xargs`, `find -exec`, `env`), and from then on [`crate::lookup`]
//! finds it like any other command (awk, which runs commands of the table itself, brings the
//! others with it). Every other build has them in the table and never loads.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;

use crate::Command;

/// The commands a split build supplies on first use.
pub const ON_DEMAND: [&str; 2] = ["awk", "jq"];

/// Fetches a command's code: the host's loader (the playground's fetches a wasm chunk). An
/// `Err` is a sentence saying what failed.
pub type Loader = fn(&'static str) -> Pin<Box<dyn Future<Output = Result<Command, String>>>>;

thread_local! {
    /// The commands supplied so far, and the host's loader. Thread-local: the page is one thread,
    /// and a command's code, once loaded, serves every sandbox on it.
    static SUPPLIED: RefCell<Vec<(&'static str, Command)>> = const { RefCell::new(Vec::new()) };
    static LOADER: RefCell<Option<Loader>> = const { RefCell::new(None) };
}

/// Registers the host's loader (once, at start-up).
pub fn set_loader(loader: Loader) {
    LOADER.with(|slot| *slot.borrow_mut() = Some(loader));
}

/// A supplied command, if `name` has been loaded.
pub(crate) fn supplied(name: &str) -> Option<Command> {
    SUPPLIED.with(|supplied| {
        supplied
            .borrow()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
    })
}

/// Whether `name` is a command this build must load before it can run.
pub fn pending(name: &str) -> bool {
    ON_DEMAND.contains(&name) && crate::lookup(name).is_none()
}

/// Loads `name` (one of [`ON_DEMAND`]) through the host's loader and keeps it; an `Err` says why
/// it cannot run (no loader, or the loader's failure — a later call tries again).
pub async fn load(name: &str) -> Result<Command, String> {
    if let Some(command) = crate::lookup(name) {
        return Ok(command);
    }
    let Some(&name) = ON_DEMAND.iter().find(|n| **n == name) else {
        return Err("not a command of this sandbox".into());
    };
    let Some(loader) = LOADER.with(|slot| *slot.borrow()) else {
        return Err(
            "this build loads the command's code on first use, and its host gave no loader".into(),
        );
    };
    let command = loader(name).await?;
    SUPPLIED.with(|supplied| supplied.borrow_mut().push((name, command)));
    // awk runs commands of the table itself (`system`, pipes, `getline`), without the shell:
    // it comes with every other command loaded on first use, so none it runs is missing.
    if name == "awk" {
        for other in ON_DEMAND {
            if crate::lookup(other).is_none() {
                let command = loader(other).await?;
                SUPPLIED.with(|supplied| supplied.borrow_mut().push((other, command)));
            }
        }
    }
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_with_the_whole_table_has_nothing_to_load() {
        for name in ON_DEMAND {
            assert!(!pending(name), "{name}");
        }
        assert!(!pending("sort"));
        assert!(!pending("no-such-command"));
    }

    #[test]
    fn loading_a_command_the_table_has_returns_it_without_the_loader() {
        fn unreachable_loader(
            _: &'static str,
        ) -> Pin<Box<dyn Future<Output = Result<Command, String>>>> {
            Box::pin(async { Err("the loader was called".to_string()) })
        }
        set_loader(unreachable_loader);
        let run = |name| futures_executor(load(name));
        assert!(run("jq").is_ok());
        assert_eq!(
            run("nope").err().as_deref(),
            Some("not a command of this sandbox")
        );
    }

    /// Polls a future that never waits (these do not) to its end.
    fn futures_executor<T>(future: impl Future<Output = T>) -> T {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(value) => value,
            std::task::Poll::Pending => panic!("the future waited"),
        }
    }
}
