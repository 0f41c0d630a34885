mod fixtures;
mod health;
mod stack;
