mod fake_pvesm;
mod ids;
