mod matrix;
mod migration;
mod plan;
mod rig;
