//! Game-query protocols declared as types: one module per protocol.
