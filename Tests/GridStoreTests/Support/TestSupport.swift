// Tests/GridStoreTests/Support/TestSupport.swift - the shared test helpers, visible in every file of this target

@_exported import TestSupport
