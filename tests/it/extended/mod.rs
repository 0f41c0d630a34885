mod cpubench;
mod io;
mod sustained;
mod syncwrite;
