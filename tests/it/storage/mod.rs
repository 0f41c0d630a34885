mod fixtures;
mod stack;
