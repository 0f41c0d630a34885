//! DNS EXT and DNS INT as data: the schedule a query waits by, what each
//! name server did and what one run counted (see `probe::dns` for the
//! query loop and what each schedule does).

use std::net::SocketAddr;
use std::time::Duration;

use crate::model::choice::Choice;

/// How a query waits for its answer (see `probe::dns`'s documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Each server in turn for at most --dns-timeout, on a connected socket
    Bounded,
    /// Net::DNS's schedule with pveperf's arguments: one second shared by all servers
    Pveperf,
}

impl Schedule {
    pub const ALL: [Schedule; 2] = [Schedule::Bounded, Schedule::Pveperf];

    /// The name JSON and CSV record (`settings.dns_schedule`).
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Bounded => "bounded",
            Schedule::Pveperf => "pveperf",
        }
    }
}

impl Choice for Schedule {
    const ALL: &'static [Self] = &Schedule::ALL;

    fn name(self) -> &'static str {
        Schedule::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            Schedule::Bounded => {
                "Each server in turn for at most --dns-timeout, on a connected socket"
            }
            Schedule::Pveperf => {
                "Net::DNS's schedule with pveperf's arguments: one second shared by all servers"
            }
        }
    }
}

/// What one name server did over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStats {
    pub addr: SocketAddr,
    /// Queries sent to it.
    pub sent: u32,
    /// Its answers that were accepted (possibly late, in the pveperf schedule).
    pub answered: u32,
    /// Queries the system refused: a closed port (bounded) or a failed send.
    pub refused: u32,
    /// Time from sending to its answer, summed over its answers.
    pub answer_time: Duration,
}

impl ServerStats {
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            sent: 0,
            answered: 0,
            refused: 0,
            answer_time: Duration::ZERO,
        }
    }

    /// Adds another run's counts for the same server.
    pub fn add(&mut self, other: &ServerStats) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.refused += other.refused;
        self.answer_time += other.answer_time;
    }

    /// Queries it was sent and neither answered nor refused.
    pub fn timed_out(&self) -> u32 {
        self.sent.saturating_sub(self.answered + self.refused)
    }

    /// Mean milliseconds from query to its answer, when it answered.
    pub fn mean_answer_ms(&self) -> Option<f64> {
        (self.answered > 0)
            .then(|| self.answer_time.as_secs_f64() * 1000.0 / f64::from(self.answered))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DnsFigure {
    /// The search domain queried (DNS INT), or `None` for DNS EXT.
    pub domain: Option<String>,
    /// The servers asked, in order, with what each did.
    pub servers: Vec<ServerStats>,
    pub queries: u32,
    pub answered: u32,
    pub timed_out: u32,
    pub refused: u32,
    pub elapsed: Duration,
    /// The longest one query waits for its answer: one server's share in
    /// the bounded schedule, Net::DNS's whole round in pveperf's.
    pub timeout: Duration,
}

impl DnsFigure {
    /// Mean wall-clock milliseconds per query, timeouts included (pveperf's figure).
    pub fn mean_ms(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.elapsed.as_secs_f64() * 1000.0 / f64::from(self.queries)
        }
    }

    /// True when no server answered any query: there is no figure to print.
    pub fn no_answer(&self) -> bool {
        self.answered == 0
    }
}

/// Each server's counts summed over several runs (in the first run's order).
pub fn servers_over(runs: &[DnsFigure]) -> Vec<ServerStats> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut total: Vec<ServerStats> = first
        .servers
        .iter()
        .map(|s| ServerStats::new(s.addr))
        .collect();
    for run in runs {
        for (t, s) in total.iter_mut().zip(&run.servers) {
            t.add(s);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_add_up_over_runs() {
        let addr: SocketAddr = "127.0.0.1:53".parse().unwrap();
        let run = |sent, answered, refused| ServerStats {
            sent,
            answered,
            refused,
            answer_time: Duration::from_millis(2) * answered,
            ..ServerStats::new(addr)
        };
        let fig = |s: ServerStats| DnsFigure {
            domain: None,
            servers: vec![s],
            queries: 0,
            answered: 0,
            timed_out: 0,
            refused: 0,
            elapsed: Duration::ZERO,
            timeout: Duration::from_secs(1),
        };
        let total = servers_over(&[fig(run(10, 4, 1)), fig(run(6, 6, 0))]);
        assert_eq!(total.len(), 1);
        assert_eq!(
            (total[0].sent, total[0].answered, total[0].refused),
            (16, 10, 1)
        );
        assert_eq!(total[0].timed_out(), 5);
        assert!((total[0].mean_answer_ms().unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(ServerStats::new(addr).mean_answer_ms(), None);
    }

    #[test]
    fn mean_includes_every_query() {
        let f = DnsFigure {
            domain: None,
            servers: vec![],
            queries: 4,
            answered: 3,
            timed_out: 1,
            refused: 0,
            elapsed: Duration::from_millis(2010),
            timeout: Duration::from_secs(2),
        };
        assert!((f.mean_ms() - 502.5).abs() < 1e-9);
        assert!(!f.no_answer());
    }
}
