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

/// The commands loading `name` brings: itself, and for awk, which runs commands of the table
/// itself (`system`, pipes, `getline`) without the shell, every other one loaded on first use, so
/// none it runs is missing.
fn brings(name: &'static str) -> impl Iterator<Item = &'static str> {
    ON_DEMAND
        .into_iter()
        .filter(move |&other| other == name || name == "awk")
}

/// Whether `name` is a command this build must load before it can run (awk also while a
/// command it could run is missing).
pub fn pending(name: &str) -> bool {
    ON_DEMAND
        .iter()
        .find(|&&n| n == name)
        .is_some_and(|&name| brings(name).any(|n| crate::lookup(n).is_none()))
}

/// Loads `name` (one of [`ON_DEMAND`]) through the host's loader, with what it brings, and keeps
/// them; an `Err` says why it cannot run (no loader, or the loader's failure: nothing is kept,
/// and a later call tries again).
pub async fn load(name: &str) -> Result<Command, String> {
    let Some(&name) = ON_DEMAND.iter().find(|n| **n == name) else {
        return crate::lookup(name).ok_or_else(|| "not a command of this sandbox".into());
    };
    if !pending(name) {
        return crate::lookup(name).ok_or_else(|| "not a command of this sandbox".into());
    }
    let Some(loader) = LOADER.with(|slot| *slot.borrow()) else {
        return Err(
            "this build loads the command's code on first use, and its host gave no loader".into(),
        );
    };
    let loaded = fetch(name, &|n| crate::lookup(n).is_some(), loader).await?;
    SUPPLIED.with(|supplied| supplied.borrow_mut().extend(loaded));
    crate::lookup(name).ok_or_else(|| "the loader did not supply it".into())
}

/// What loading `name` brings that `known` lacks, every module fetched before any is returned:
/// a failure returns none.
async fn fetch(
    name: &'static str,
    known: &dyn Fn(&str) -> bool,
    loader: Loader,
) -> Result<Vec<(&'static str, Command)>, String> {
    let mut loaded = Vec::new();
    for needed in brings(name).filter(|n| !known(n)) {
        loaded.push((needed, loader(needed).await?));
    }
    Ok(loaded)
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

    fn loader_failing_jq(
        name: &'static str,
    ) -> Pin<Box<dyn Future<Output = Result<Command, String>>>> {
        Box::pin(async move {
            match name {
                "jq" => Err("offline".to_string()),
                _ => Ok((|_, _| 0) as Command),
            }
        })
    }

    fn loader_of_all(_: &'static str) -> Pin<Box<dyn Future<Output = Result<Command, String>>>> {
        Box::pin(async { Ok((|_, _| 0) as Command) })
    }

    #[test]
    fn awk_brings_jq_and_a_failure_brings_nothing() {
        fn names(loaded: Vec<(&'static str, Command)>) -> Vec<&'static str> {
            loaded.into_iter().map(|(n, _)| n).collect()
        }
        let none_known = |_: &str| false;
        // awk runs commands itself: it comes with jq, or not at all.
        let fetched = futures_executor(fetch("awk", &none_known, loader_of_all)).unwrap();
        assert_eq!(names(fetched), ["awk", "jq"]);
        assert_eq!(
            futures_executor(fetch("awk", &none_known, loader_failing_jq))
                .err()
                .as_deref(),
            Some("offline")
        );
        // jq runs nothing: it comes alone; what is known is not fetched again.
        let fetched = futures_executor(fetch("jq", &none_known, loader_of_all)).unwrap();
        assert_eq!(names(fetched), ["jq"]);
        let awk_known = |n: &str| n == "awk";
        let fetched = futures_executor(fetch("awk", &awk_known, loader_of_all)).unwrap();
        assert_eq!(
            names(fetched),
            ["jq"],
            "awk loaded while jq failed: jq is fetched now"
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
