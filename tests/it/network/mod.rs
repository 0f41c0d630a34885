mod matrix;
mod migration;
mod rig;
