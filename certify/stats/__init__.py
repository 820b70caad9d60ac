"""Pure numerics: arrays in, numbers out. Nothing here knows about result statuses."""
