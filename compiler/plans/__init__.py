"""Host-side plans: pure functions of ownerships, layouts and element types that decide which
collective, copy or tensor-core instruction sequence a kernel issues. No IR imports."""
