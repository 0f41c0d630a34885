mod faults;
mod hostile;
