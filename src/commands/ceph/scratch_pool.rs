//! A pool made for the run (`--scratch-pool`): made only when every
//! monitor would let it be deleted, and deleted on every way out.

use super::*;

/// The monitors in quorum that would refuse to delete a pool
/// (`mon_allow_pool_delete` is not true on them, as each runs now:
/// ceph.conf, the config database and `config set` alike); empty when
/// all allow it.
pub fn pool_delete_refused(tools: &CephTools, mons: &[String]) -> Result<Vec<String>, CephError> {
    let mut refused = Vec::new();
    for m in mons {
        let mon = format!("mon.{m}");
        let c = tools.call(
            "ceph",
            &["tell", &mon, "config", "get", POOL_DELETE, "-f", "json"],
            READ_LIMIT,
            true,
        );
        let text = c.answer(child::run(c.program, &c.argv, &c.opts))?;
        if parse::config_value(&text, POOL_DELETE)? != "true" {
            refused.push(format!("mon.{m}"));
        }
    }
    Ok(refused)
}

/// The monitor option without which no pool can be deleted.
pub const POOL_DELETE: &str = "mon_allow_pool_delete";

/// How long a new pool's placement groups may take to become active.
const PG_ACTIVE_LIMIT: Duration = Duration::from_secs(120);

/// A pool made for the run (`--scratch-pool`), named by the run's id,
/// with the cluster's defaults (size, PG count), for RBD images;
/// [`ScratchPool::delete`] removes it.
pub struct ScratchPool<'a> {
    tools: &'a CephTools<'a>,
    pub name: String,
    made: bool,
}

impl<'a> ScratchPool<'a> {
    pub fn new(tools: &'a CephTools<'a>, run_id: &str) -> Self {
        ScratchPool {
            tools,
            name: run_id.to_string(),
            made: false,
        }
    }

    /// Makes the pool, waits for its placement groups to be active, and
    /// reads the cluster's pools and room again into `view`. Ctrl-C does
    /// not stop the creation (so the pool is known and deleted), only the
    /// wait.
    pub fn create(&mut self, view: &mut ClusterView) -> Result<(), CephError> {
        let t = self.tools;
        // Counted as made before the answer: a create that timed out may
        // still have made it, and removing a pool that is not there is no
        // error to Ceph (`osd pool rm` says it does not exist, status 0).
        self.made = true;
        let c = t.call(
            "ceph",
            &["osd", "pool", "create", &self.name],
            READ_LIMIT,
            false,
        );
        c.answer(child::run(c.program, &c.argv, &c.opts))?;
        let c = t.call(
            "ceph",
            &["osd", "pool", "application", "enable", &self.name, "rbd"],
            READ_LIMIT,
            false,
        );
        c.answer(child::run(c.program, &c.argv, &c.opts))?;
        let start = std::time::Instant::now();
        loop {
            if let Some(sig) = t.interrupt.signal() {
                return Err(CephError::Interrupted(sig));
            }
            let c = t.call(
                "ceph",
                &["pg", "ls-by-pool", &self.name, "-f", "json"],
                READ_LIMIT,
                true,
            );
            let states = parse::pg_states(&c.answer(child::run(c.program, &c.argv, &c.opts))?)?;
            if !states.is_empty() && states.iter().all(|s| s.starts_with("active")) {
                break;
            }
            if start.elapsed() > PG_ACTIVE_LIMIT {
                return Err(CephError::Tool {
                    command: format!("ceph pg ls-by-pool {}", self.name),
                    why: format!(
                        "its placement groups were not active within {} s",
                        PG_ACTIVE_LIMIT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let c = t.call(
            "ceph",
            &["osd", "pool", "ls", "detail", "-f", "json"],
            READ_LIMIT,
            true,
        );
        view.pools = parse::pools(&c.answer(child::run(c.program, &c.argv, &c.opts))?)?;
        let c = t.call("ceph", &["df", "-f", "json"], READ_LIMIT, true);
        view.space = parse::df_pools(&c.answer(child::run(c.program, &c.argv, &c.opts))?)?;
        Ok(())
    }

    /// Deletes the pool if it was made; what is left, if it could not be.
    pub fn delete(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.made) {
            return None;
        }
        let n = self.name.as_str();
        let c = self.tools.call(
            "ceph",
            &["osd", "pool", "rm", n, n, "--yes-i-really-really-mean-it"],
            CLEAN_LIMIT,
            false,
        );
        c.answer(child::run(c.program, &c.argv, &c.opts))
            .err()
            .map(|e| {
                format!(
                    "pool {n} ({e}); `ceph osd pool rm {n} {n} --yes-i-really-really-mean-it` removes it"
                )
            })
    }
}
