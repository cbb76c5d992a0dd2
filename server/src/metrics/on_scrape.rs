//! A metric whose value is read when `/metrics` is scraped rather than kept up to date: the
//! simulator's running and waiting sequences (its schedulers can be replaced at run time), the
//! token cache's size.

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;

/// `metric`, updated by `update` just before every scrape reads it.
pub struct OnScrape<M> {
    metric: M,
    update: Box<dyn Fn(&M) + Send + Sync>,
}

impl<M: Collector> OnScrape<M> {
    pub fn new(metric: M, update: impl Fn(&M) + Send + Sync + 'static) -> Self {
        OnScrape {
            metric,
            update: Box::new(update),
        }
    }
}

impl<M: Collector> Collector for OnScrape<M> {
    fn desc(&self) -> Vec<&Desc> {
        self.metric.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        (self.update)(&self.metric);
        self.metric.collect()
    }
}
