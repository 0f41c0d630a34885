mod formats;
mod metrics;
mod plot;
