mod formats;
mod metrics;
pub mod plot;
