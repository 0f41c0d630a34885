mod ci_rules;
mod lock;
mod options;
