//! The scheduler's `-x` part: the extended I/O tests on a file or the
//! device, the CPU figures, RANDOM WRITE and SYNC WRITE 4K (one job,
//! judged; then `--sync-jobs`).

use super::*;

impl Runner<'_> {
    pub(super) fn extended_tests(&mut self, device: &Result<Targets, Outcome<()>>) -> Step {
        let cfg = self.config;
        if cfg.volume.is_some() {
            // The prefill, measured first.
            self.emit(Figure::SeqWrite);
        } else if self.wants(Test::Seqwrite) {
            let runs = Test::Seqwrite.cost().writes;
            let result = self
                .space_for(cfg.write_size, "SEQ WRITE", WRITE_SIZE_HINT)
                .and_then(|()| {
                    self.measure
                        .seq_write(&cfg.path, cfg.write_size, runs, cfg.zero_data)
                });
            self.report.extended.seq_write = Some(outcome(result)?);
            self.emit(Figure::SeqWrite);
        }
        let device_test = |this: &mut Self, params: JobParams| match device {
            Ok(targets) => outcome(this.each_device(targets, |m, dev, window| {
                m.device_job(dev, params, window, cfg.io_engine)
            })),
            Err(missing) => Ok(missing.retype()),
        };
        if self.wants(Test::Seqread) {
            self.report.extended.seq_read = Some(device_test(self, JobParams::SEQ_READ_DIRECT)?);
            self.emit(Figure::SeqReadDirect);
        }
        if self.wants(Test::Randread) {
            self.report.extended.rand_read_qd1 =
                Some(device_test(self, JobParams::RAND_READ_4K_QD1)?);
            self.emit(Figure::RandRead4kQd1);
            self.report.extended.rand_read_qd32 =
                Some(device_test(self, JobParams::RAND_READ_4K_QD32)?);
            self.emit(Figure::RandRead4kQd32);
        }
        if self.wants(Test::Randwrite) {
            self.rand_write_tests(device)?;
        }
        if self.wants(Test::Mixed) && cfg.volume.is_some() {
            self.report.extended.mixed = Some(Outcome::Skipped(NO_FILESYSTEM.into()));
            self.emit(Figure::Mixed);
        } else if self.wants(Test::Mixed) {
            let result = self
                .space_for(cfg.write_size, "MIXED 70/30", WRITE_SIZE_HINT)
                .and_then(|()| {
                    self.measure.mixed(
                        &cfg.path,
                        cfg.write_size,
                        JobParams::MIXED,
                        cfg.window,
                        cfg.io_engine,
                    )
                });
            self.report.extended.mixed = Some(outcome(result)?);
            self.emit(Figure::Mixed);
        }
        if self.wants(Test::Syncwrite) {
            self.sync_tests()?;
        }
        if self.wants(Test::Sustained) {
            let result = match cfg.volume {
                Some(_) => Err(ProbeError::Unavailable(NO_FILESYSTEM.into())),
                None => self
                    .space_for(cfg.sustained_bytes, "SUSTAINED WRITE", WRITE_SIZE_HINT)
                    .and_then(|()| {
                        (self.sink)(
                            &self.report,
                            Event::Begin {
                                line: Figure::SustainedWrite,
                                run: 1,
                                runs: 1,
                                window: cfg.sustained,
                            },
                        );
                        self.measure
                            .sustained(&cfg.path, cfg.sustained_bytes, cfg.sustained)
                    }),
            };
            self.report.extended.sustained = Some(outcome(result)?);
            self.emit(Figure::SustainedWrite);
        }
        if self.wants(Test::CpuBench) {
            self.cpu_bench()?;
        }
        Ok(())
    }

    /// PBS's CPU figures, once (not `--runs` times, as PBS runs them).
    pub(super) fn cpu_bench(&mut self) -> Step {
        let cfg = self.config;
        let rounds = if cfg.cpu_threads.is_some() { 2.0 } else { 1.0 };
        (self.sink)(
            &self.report,
            Event::Begin {
                line: Figure::CPU_BENCH[0],
                run: 1,
                runs: 1,
                window: cfg
                    .window
                    .mul_f64(crate::measure::plan::CPU_BENCH_WINDOWS * rounds),
            },
        );
        let result = self.measure.cpu_bench(cfg.window, cfg.cpu_threads);
        self.report.extended.cpu_bench = Some(outcome(result)?);
        for figure in Figure::CPU_BENCH {
            self.emit(figure);
        }
        Ok(())
    }

    /// RANDOM WRITE 4K QD1 and QD32: on the scratch volume, or on a file
    /// of `--write-size` in PATH (written first).
    pub(super) fn rand_write_tests(&mut self, device: &Result<Targets, Outcome<()>>) -> Step {
        let cfg = self.config;
        let jobs = Test::Randwrite.cost().jobs;
        let result = match &cfg.volume {
            Some(_) if let Err(missing) = device => {
                Err(ProbeError::Unavailable(missing.reason().to_string()))
            }
            Some(dev) => {
                self.measure
                    .write_jobs(WriteTarget::Device(dev), jobs, cfg.window, cfg.io_engine)
            }
            None => self
                .space_for(cfg.write_size, "RANDOM WRITE 4K", WRITE_SIZE_HINT)
                .and_then(|()| {
                    self.measure.write_jobs(
                        WriteTarget::File {
                            path: &cfg.path,
                            bytes: cfg.write_size,
                        },
                        jobs,
                        cfg.window,
                        cfg.io_engine,
                    )
                }),
        };
        let named = cfg.volume.is_some();
        let (qd1, qd32) = match outcome(result)? {
            Outcome::Measured(mut each) if each.len() == 2 => {
                let qd32 = each.pop().expect("two jobs");
                let qd1 = each.pop().expect("two jobs");
                let one = |s| {
                    Outcome::Measured(Devices {
                        each: vec![s],
                        named,
                    })
                };
                (one(qd1), one(qd32))
            }
            Outcome::Measured(_) => unreachable!("write_jobs runs each job it is given"),
            Outcome::Failed(why) => (Outcome::Failed(why.clone()), Outcome::Failed(why)),
            Outcome::Skipped(why) => (Outcome::Skipped(why.clone()), Outcome::Skipped(why)),
        };
        self.report.extended.rand_write_qd1 = Some(qd1);
        self.emit(Figure::RandWrite4kQd1);
        self.report.extended.rand_write_qd32 = Some(qd32);
        self.emit(Figure::RandWrite4kQd32);
        Ok(())
    }

    /// SYNC WRITE 4K with one job, judged; then `--sync-jobs`'s steps,
    /// the first failure ending them.
    pub(super) fn sync_tests(&mut self) -> Step {
        let cfg = self.config;
        let one = outcome(self.sync_test(1))?;
        self.report.extended.sync_write = Some(match one {
            Outcome::Measured(figure) => Outcome::Measured(self.judged(figure)),
            Outcome::Failed(why) => Outcome::Failed(why),
            Outcome::Skipped(why) => Outcome::Skipped(why),
        });
        self.emit(Figure::SyncWrite4k);
        if cfg.sync_jobs.is_empty() {
            return Ok(());
        }
        if cfg.volume.is_some() {
            self.report.extended.sync_scaling = Some(Outcome::Skipped(
                "--sync-jobs: on a scratch volume SYNC WRITE 4K runs one job".into(),
            ));
            self.emit(Figure::SyncWriteJobs);
            self.emit(Figure::SyncWritePeak);
            return Ok(());
        }
        let mut steps = Vec::with_capacity(cfg.sync_jobs.len());
        let mut failed = None;
        for &jobs in &cfg.sync_jobs {
            match outcome(self.sync_test(jobs))? {
                Outcome::Measured(step) => steps.push(step),
                Outcome::Failed(why) | Outcome::Skipped(why) => {
                    failed = Some(format!("{}: {why}", jobs_words(jobs)));
                    break;
                }
            }
        }
        self.report.extended.sync_scaling = Some(match failed {
            Some(why) => Outcome::Failed(why),
            None => Outcome::Measured(SyncScaling { steps }),
        });
        self.emit(Figure::SyncWriteJobs);
        self.emit(Figure::SyncWritePeak);
        Ok(())
    }

    /// A scratch volume's tests need its prefill.
    pub(super) fn prefilled(&self) -> Result<(), ProbeError> {
        match &self.report.extended.seq_write {
            Some(Outcome::Failed(why) | Outcome::Skipped(why)) => Err(ProbeError::Unavailable(
                format!("the scratch volume's prefill failed: {why}"),
            )),
            _ => Ok(()),
        }
    }

    /// One count of jobs, each with its own file (one job on a scratch volume).
    pub(super) fn sync_test(&mut self, jobs: u32) -> Result<SyncWriteFigure, ProbeError> {
        let cfg = self.config;
        let bytes = crate::measure::plan::SYNC_FILE_BYTES;
        if let Some(dev) = &cfg.volume {
            self.prefilled()?;
            return self
                .measure
                .sync_write_device(dev, bytes, cfg.sync_mode, cfg.window);
        }
        self.writable()?;
        let what = format!("SYNC WRITE 4K with {}", jobs_words(jobs));
        self.space_for(bytes * u64::from(jobs), &what, "; fewer --sync-jobs fit")?;
        self.measure
            .sync_write(&cfg.path, jobs, bytes, cfg.sync_mode, cfg.window)
    }

    /// The verdict on the flushes and the class's band, from what the run saw.
    pub(super) fn judged(&self, figure: SyncWriteFigure) -> SyncResult {
        let fs = self.report.filesystem.as_ref().and_then(Outcome::measured);
        let storage = self.report.storage.as_ref();
        let iops = figure.iops();
        let verdict = match fs {
            Some(fs) => crate::syncverdict::judge(fs, storage, iops),
            None => FlushVerdict {
                kind: VerdictKind::Unknown,
                reason: "the filesystem is unknown".into(),
            },
        };
        SyncResult {
            reference: crate::syncverdict::reference(storage, self.config.plp, iops),
            published: crate::syncverdict::published::of(storage, iops),
            figure,
            verdict,
        }
    }
}
