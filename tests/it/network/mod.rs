mod matrix;
mod rig;
