//! Small integer ids that index the engine's arenas.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an arena index.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A physical CPU (hardware thread), numbered 0..pcpus as Xen numbers them.
    PcpuId
);
id_type!(
    /// A virtual CPU, numbered across the whole host in domain order.
    VcpuId
);
id_type!(
    /// A domain, numbered in scenario order (Domain 0 is the first).
    DomId
);
