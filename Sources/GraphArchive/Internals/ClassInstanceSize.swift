// Sources/GraphArchive/Internals/ClassInstanceSize.swift - the size of a class's instances

/// The standard library's `_class_getInstancePositiveExtentSize(_:)`: the bytes an instance of
/// `type` occupies (header and stored properties), as the runtime allocates it. Internal to
/// the standard library's interface but exported by it on every platform (on Darwin it calls
/// `class_getInstanceSize`); the memory budget charges an object this much before it is built.
@_silgen_name("$ss36_class_getInstancePositiveExtentSizeySiyXlXpF")
func classInstanceSize(_ type: AnyClass) -> Int
