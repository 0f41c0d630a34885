//! `--clients`: each pool job from several nodes at once, as the Proxmox
//! VE Ceph benchmark paper measures a cluster (one client measures the
//! client: its NIC, its CPU).
//!
//! For every job the run starts `pveprobe ceph-client` on each client node
//! (this node directly, the others over the ssh `cluster` uses), all told
//! one start time on the cluster's clocks. Each runs the job's
//! `rados bench` (or `rbd bench` on an image of its own) in a RADOS
//! namespace of its own (`RUN-NODE`) and answers with its figure, when it
//! started and its link on Ceph's public network, one JSON line. Its stdin
//! stays open while the run wants it: when it closes (Ctrl-C here, a
//! client given up on, the ssh connection gone) the client stops its bench
//! and removes its namespace's objects itself. This node removes every
//! client's namespace and image after the pool too, whatever the clients
//! did.
//!
//! Its files, as `load`'s: this one is the coordinator (the run of a pool
//! job from every client, and their figures' total); [`wire`] the job and
//! answer that cross ssh; [`serve`] the client's end (`ceph-client`);
//! [`resolve`] the client nodes `--clients` names.

pub mod resolve;
pub mod serve;
pub mod wire;

use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::*;
use crate::sys::conversation::Conversation;
use resolve::ClientNode;
use wire::{ClientAnswer, ClientFigure, ClientJob};

/// How long after the command the clients start together: time for ssh
/// to connect and the client to start.
const START_AFTER: Duration = Duration::from_secs(3);
/// How long a client told to stop gets to stop its bench and clean up.
const STOP_WAIT: Duration = Duration::from_secs(60);
/// How long an rbd job may take when this node's own run of it gave no
/// time, s (as long as this node's own may).
const RBD_UNKNOWN: f64 = 3600.0;
/// The longest line a client's answer may be.
const MAX_LINE: usize = 1 << 20;

/// Each client's namespace and image name in a run.
pub fn namespace(run_id: &str, node: &str) -> String {
    format!("{run_id}-{node}")
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The total of the clients' figures: MiB/s, IOPS and operations summed;
/// the mean latency over all their operations (each client's weighted by
/// its operations), the largest of the largest; each second summed.
/// `None` when no client has a figure.
pub fn total(clients: &[ClientFigure]) -> Option<BenchFigure> {
    let figs: Vec<&BenchFigure> = clients.iter().filter_map(|c| c.figure.as_ref()).collect();
    let first = figs.first()?;
    let ops: f64 = figs.iter().map(|f| f.ops).sum();
    let weighted: Option<f64> = figs
        .iter()
        .map(|f| f.avg_lat_ms.map(|l| l * f.ops))
        .sum::<Option<f64>>();
    let longest = figs.iter().map(|f| f.per_second.len()).max().unwrap_or(0);
    Some(BenchFigure {
        block: first.block,
        threads: figs.iter().map(|f| f.threads).sum(),
        seconds: figs.iter().map(|f| f.seconds).fold(0.0, f64::max),
        ops,
        mib_s: figs.iter().map(|f| f.mib_s).sum(),
        iops: figs.iter().map(|f| f.iops).sum(),
        avg_lat_ms: weighted.filter(|_| ops > 0.0).map(|w| w / ops),
        max_lat_ms: figs
            .iter()
            .map(|f| f.max_lat_ms)
            .collect::<Option<Vec<f64>>>()
            .and_then(|l| l.into_iter().reduce(f64::max)),
        per_second: (0..longest)
            .map(|i| figs.iter().filter_map(|f| f.per_second.get(i)).sum())
            .collect(),
    })
}

/// How the run reaches its clients.
pub struct Clients<'a> {
    pub nodes: &'a [ClientNode],
    /// ssh to the other nodes and the command that runs pveprobe there.
    pub reach: Option<&'a crate::nodes::Reach>,
    /// `--conf`, forwarded when given.
    pub conf_given: bool,
    /// How long past its seconds a client may take to answer.
    pub answer_within: Duration,
}

impl Clients<'_> {
    /// The words that run `job` on `c`.
    fn command(&self, c: &ClientNode, job: &ClientJob, limit: Duration) -> Result<Command, String> {
        let mut words: Vec<String> = vec!["ceph-client".into()];
        if self.conf_given || c.node.is_none() {
            words.extend(["--conf".into(), job.conf.display().to_string()]);
        }
        words.extend([
            "--pool".into(),
            job.pool.clone(),
            "--namespace".into(),
            job.namespace.clone(),
            "--job".into(),
            job.job.clone(),
            "--seconds".into(),
            job.seconds.to_string(),
            "--rbd-bytes".into(),
            job.rbd_bytes.to_string(),
            "--start-at".into(),
            job.start_at_ms.to_string(),
        ]);
        if let Some(cap) = job.cap {
            words.extend(["--cap".into(), cap.to_string()]);
        }
        let there = match &c.node {
            Some(node) => Some((self.reach.ok_or("no way to reach the other nodes")?, node)),
            None => None,
        };
        crate::nodes::remote::pveprobe_command(&words, there, |command, words| {
            crate::nodes::remote::timed_line(command, words, limit)
        })
    }

    /// Runs `job` (its namespace made per client) on every client at once;
    /// each client's part, in the order of the nodes.
    /// `expect` is how long the job itself should take (a rados job its
    /// seconds; an rbd job, which moves a size, not a time, three times
    /// what it took from this node alone); a client gets that and
    /// `answer_within` more.
    pub fn gather(
        &self,
        job: &ClientJob,
        expect: Duration,
        run_id: &str,
        interrupt: &Interrupt,
    ) -> Vec<ClientFigure> {
        let start_at = now_ms() + START_AFTER.as_millis() as u64;
        let run_for = START_AFTER + expect + self.answer_within;
        let (tx, rx) = mpsc::channel();
        let mut answers: Vec<Option<Result<ClientAnswer, String>>> = vec![None; self.nodes.len()];
        let mut talks: Vec<Option<Conversation>> = Vec::new();
        for (i, c) in self.nodes.iter().enumerate() {
            let mine = ClientJob {
                namespace: namespace(run_id, &c.name),
                start_at_ms: start_at,
                ..job.clone()
            };
            let started = self
                .command(c, &mine, run_for + STOP_WAIT)
                .and_then(|mut cmd| {
                    Conversation::start(&mut cmd, i, MAX_LINE, tx.clone())
                        .map_err(|e| crate::error::describe(&e))
                });
            match started {
                Ok(t) => talks.push(Some(t)),
                Err(e) => {
                    answers[i] = Some(Err(e));
                    talks.push(None);
                }
            }
        }
        drop(tx);
        let given_up = wait(&rx, &mut answers, &mut talks, run_for, interrupt);
        self.nodes
            .iter()
            .zip(talks)
            .zip(answers)
            .map(|((c, talk), answer)| {
                let said = talk
                    .map(|t| t.finish(GRACE).first_error_line())
                    .filter(|s| !s.is_empty());
                let mut f = ClientFigure {
                    node: c.name.clone(),
                    ..ClientFigure::default()
                };
                match answer {
                    Some(Ok(a)) => f.take(a, start_at),
                    Some(Err(e)) => {
                        f.error = Some(match said {
                            Some(s) => format!("{e}: {s}"),
                            None => e,
                        });
                    }
                    None if given_up => {
                        f.error = Some(format!(
                            "gave no answer within {} s past the job's {:.0} s: given up on (told to stop and clean up)",
                            self.answer_within.as_secs(),
                            expect.as_secs_f64()
                        ));
                    }
                    None => f.error = Some("stopped before it answered".into()),
                }
                f
            })
            .collect()
    }
}

/// Reads the clients' answers until each has one, for up to `run_for`;
/// then (or at a signal) tells every client to stop (closes its stdin:
/// it stops its bench and removes its objects) and waits a little more.
/// Whether a client was given up on for lack of time.
fn wait(
    rx: &mpsc::Receiver<crate::sys::conversation::Heard>,
    answers: &mut [Option<Result<ClientAnswer, String>>],
    talks: &mut [Option<Conversation>],
    run_for: Duration,
    interrupt: &Interrupt,
) -> bool {
    use crate::sys::conversation::{Listened, listen};
    let all = |a: &&mut [Option<Result<ClientAnswer, String>>]| a.iter().all(Option::is_some);
    let hear = |a: &mut &mut [Option<Result<ClientAnswer, String>>],
                (i, line): (usize, Option<String>)| {
        let Some(slot) = a.get_mut(i).filter(|s| s.is_none()) else {
            return;
        };
        match line {
            Some(line) => {
                if let Ok(answer) = serde_json::from_str::<ClientAnswer>(&line) {
                    *slot = Some(Ok(answer));
                }
            }
            None => *slot = Some(Err("it ended without an answer".into())),
        }
    };
    let mut answers = answers;
    let first = listen(
        rx,
        Instant::now() + run_for,
        Some(interrupt),
        &mut answers,
        all,
        hear,
    );
    if matches!(first, Listened::Done | Listened::Silent) {
        return false;
    }
    // One that did not answer in time gets a moment to clean up; at a
    // signal every client stops and cleans up.
    let given_up = first == Listened::Deadline;
    for t in talks.iter_mut().flatten() {
        t.close();
    }
    let grace = if given_up { GRACE } else { STOP_WAIT };
    listen(rx, Instant::now() + grace, None, &mut answers, all, hear);
    given_up
}

/// One pool's run from every client at once.
pub struct PoolRun<'a> {
    pub pool: &'a str,
    pub run_id: &'a str,
    pub conf: &'a Path,
    pub seconds: u32,
    /// At most this many bytes written by all clients together.
    pub cap: Option<u64>,
    /// Bytes each client's rbd jobs move; `None`: no rbd jobs.
    pub rbd_bytes: Option<u64>,
}

impl Clients<'_> {
    /// The pool's jobs from every client at once, each after the one
    /// before ended on every client; the cap shared among the clients.
    /// Each client's namespace and image are removed after, whatever
    /// happened: what could not be is returned. A client's failure is in
    /// its job's `clients`; `Err` only for what stops the run.
    pub fn pool_jobs(
        &self,
        tools: &CephTools,
        run: &PoolRun,
        watch: &super::drag::Watch,
        jobs: &mut Vec<PoolJob>,
    ) -> (Result<(), CephError>, Vec<String>) {
        let mut scratches: Vec<Scratch> = self
            .nodes
            .iter()
            .map(|c| Scratch::new(tools, run.pool, &namespace(run.run_id, &c.name)))
            .collect();
        let ran = self.jobs(tools, run, watch, &mut scratches, jobs);
        let left = scratches.iter_mut().flat_map(Scratch::clean).collect();
        (ran, left)
    }

    fn jobs(
        &self,
        tools: &CephTools,
        run: &PoolRun,
        watch: &super::drag::Watch,
        scratches: &mut [Scratch],
        jobs: &mut Vec<PoolJob>,
    ) -> Result<(), CephError> {
        let n = self.nodes.len();
        let cap = run.cap.map(|c| c / n as u64);
        if let Some(s) = scratches.first() {
            s.check_room(cap)?;
        }
        let job = |key: &str| ClientJob {
            conf: run.conf.to_path_buf(),
            pool: run.pool.into(),
            namespace: String::new(),
            job: key.into(),
            seconds: run.seconds,
            cap,
            rbd_bytes: run.rbd_bytes.unwrap_or(0),
            start_at_ms: 0,
        };
        let mut one = |key: &str, label: &str, write: bool| -> Result<(), CephError> {
            if let Some(sig) = tools.interrupt.signal() {
                return Err(CephError::Interrupted(sig));
            }
            tools.progress.step(&format!(
                "pool {}: {label} from {n} clients at once ({})",
                run.pool,
                self.nodes
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            // A rados job lasts its seconds; an rbd job moves its bytes, in
            // three times what it took from this node alone at most.
            let alone = jobs
                .iter()
                .find(|j| j.key == key && j.clients.is_empty())
                .map(|j| j.figure.seconds);
            let expect = if key.starts_with("rbd_") {
                Duration::from_secs_f64(alone.map_or(RBD_UNKNOWN, |s| (s * 3.0).max(10.0)))
            } else {
                Duration::from_secs(u64::from(run.seconds))
            };
            let (clients, osds) = watch.around(write, || {
                Ok(self.gather(&job(key), expect, run.run_id, tools.interrupt))
            })?;
            jobs.push(PoolJob {
                key: key.into(),
                label: label.into(),
                figure: total(&clients).unwrap_or_default(),
                osds,
                clients,
            });
            match tools.interrupt.signal() {
                Some(sig) => Err(CephError::Interrupted(sig)),
                None => Ok(()),
            }
        };
        for (key, label, mode, ..) in RADOS_JOBS {
            one(key, label, mode == "write")?;
            for s in scratches.iter() {
                s.after_job(key)?;
            }
        }
        let Some(bytes) = run.rbd_bytes else {
            return Ok(());
        };
        // Each client's image holds its share of the room.
        let bytes = bytes.min(run.cap.map_or(u64::MAX, |c| c / n as u64));
        for s in scratches.iter_mut() {
            s.make_image(bytes)?;
        }
        for (key, label, io) in RBD_JOBS {
            one(key, label, io == "write")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(
        node: &str,
        mib_s: f64,
        ops: f64,
        avg: f64,
        max: f64,
        seconds: &[f64],
    ) -> ClientFigure {
        ClientFigure {
            node: node.into(),
            figure: Some(BenchFigure {
                block: OBJECT,
                threads: THREADS,
                seconds: 3.0,
                ops,
                mib_s,
                iops: mib_s / 4.0,
                avg_lat_ms: Some(avg),
                max_lat_ms: Some(max),
                per_second: seconds.to_vec(),
            }),
            ..ClientFigure::default()
        }
    }

    #[test]
    fn the_total_sums_the_clients_and_weighs_latency_by_operations() {
        let clients = [
            client("pve1", 100.0, 300.0, 10.0, 50.0, &[90.0, 110.0, 100.0]),
            client("pve2", 60.0, 100.0, 30.0, 200.0, &[50.0, 70.0]),
            ClientFigure {
                node: "pve3".into(),
                error: Some("given up on".into()),
                ..ClientFigure::default()
            },
        ];
        let t = total(&clients).unwrap();
        assert_eq!(t.mib_s, 160.0);
        assert_eq!(t.iops, 40.0);
        assert_eq!(t.ops, 400.0);
        assert_eq!(t.threads, 2 * THREADS);
        // (300 x 10 + 100 x 30) / 400, not the mean of 10 and 30.
        assert_eq!(t.avg_lat_ms, Some(15.0));
        assert_eq!(t.max_lat_ms, Some(200.0));
        assert_eq!(t.per_second, [140.0, 180.0, 100.0]);
        assert_eq!(total(&clients[2..]), None);
    }

    #[test]
    fn clients_are_every_node_online_or_those_named_this_node_first() {
        let dir = tempfile::tempdir().unwrap();
        let members = dir.path().join(".members");
        std::fs::write(
            &members,
            r#"{"nodename":"pve2","version":9,"cluster":{"name":"c","version":3,"nodes":4,"quorate":1},
               "nodelist":{"pve1":{"id":1,"online":1,"ip":"10.0.0.1"},"pve2":{"id":2,"online":1,"ip":"10.0.0.2"},
               "pve3":{"id":3,"online":1,"ip":"10.0.0.3"},"pve4":{"id":4,"online":0,"ip":"10.0.0.4"}}}"#,
        )
        .unwrap();
        let reach = crate::nodes::Reach {
            members,
            nodes: vec![],
            nodes_file: None,
            remote_command: vec!["pveprobe".into()],
            ssh_user: "root".into(),
            connect_timeout: 5,
            ssh_config: None,
            ssh_options: vec![],
        };
        let names = |wanted: &[&str]| -> Result<Vec<(String, bool)>, String> {
            let wanted: Vec<String> = wanted.iter().map(|w| w.to_string()).collect();
            resolve::resolve(&wanted, Some(&reach), "host")
                .map(|c| c.into_iter().map(|c| (c.name, c.node.is_none())).collect())
        };
        let local = |n: &str| (n.to_string(), true);
        let remote = |n: &str| (n.to_string(), false);
        // pve4 is offline: `all` leaves it out; pve2 (pmxcfs's nodename) runs here.
        assert_eq!(
            names(&["all"]).unwrap(),
            [local("pve2"), remote("pve1"), remote("pve3")]
        );
        assert_eq!(
            names(&["pve3", "pve2", "pve3"]).unwrap(),
            [local("pve2"), remote("pve3")]
        );
        assert!(
            names(&["pve4", "pve1"])
                .unwrap_err()
                .contains("pve4 is offline")
        );
        assert!(
            names(&["pve9", "pve1"])
                .unwrap_err()
                .contains("no node \"pve9\"")
        );
        assert!(names(&["pve1"]).unwrap_err().contains("two or more"));
        assert!(
            resolve::resolve(&["all".into()], None, "pve1")
                .unwrap_err()
                .contains("--this-node-only")
        );
        assert!(resolve::resolve(&[], None, "pve1").unwrap().is_empty());
    }

    #[test]
    fn each_client_has_a_namespace_of_its_own() {
        assert_eq!(
            namespace("pveprobe-pve1-42-1700000000", "pve2"),
            "pveprobe-pve1-42-1700000000-pve2"
        );
    }
}
