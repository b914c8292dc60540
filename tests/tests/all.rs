//! One test binary for every end-to-end suite (one link, fewer minutes on two cores).

mod suite;
