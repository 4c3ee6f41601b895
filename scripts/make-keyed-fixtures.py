#!/usr/bin/env python3
"""Writes the Python-made NSKeyedArchiver fixtures of GraphArchiveTests.

Each fixture is an NSKeyedArchiver archive built by hand as Apple's archiver lays it out
($archiver, $version, $top, $objects with "$null" first, class dictionaries), written as a
binary property list by plistlib with plistlib.UID. Besides the seed documents' shapes, some
are hostile on purpose: the tests expect clear errors for them.

Usage: scripts/make-keyed-fixtures.py [OUTPUT_DIR]
(default: Tests/GraphArchiveTests/Fixtures/KeyedArchives next to this script's repository)
"""

import os
import plistlib
import sys
from plistlib import UID


class Archive:
    """Builds $objects: add() appends an entry and returns its UID."""

    def __init__(self):
        self.objects = ["$null"]
        self.classes = {}

    def add(self, value):
        self.objects.append(value)
        return UID(len(self.objects) - 1)

    def reserve(self):
        return self.add(None)

    def set(self, uid, value):
        self.objects[uid.data] = value

    def class_uid(self, name, superclasses=("NSObject",)):
        if name not in self.classes:
            self.classes[name] = self.add({"$classes": [name, *superclasses], "$classname": name})
        return self.classes[name]

    def instance(self, class_name, fields, superclasses=("NSObject",)):
        fields = dict(fields)
        fields["$class"] = self.class_uid(class_name, superclasses)
        return self.add(fields)

    def array(self, uids, class_name="NSArray", superclasses=("NSObject",)):
        return self.instance(class_name, {"NS.objects": list(uids)}, superclasses)

    def dictionary(self, keys, values):
        return self.instance("NSDictionary", {"NS.keys": list(keys), "NS.objects": list(values)})

    def plist(self, top, archiver="NSKeyedArchiver", version=100000):
        return {"$version": version, "$archiver": archiver, "$top": top, "$objects": self.objects}


def grid_states():
    """Seed 004: archiveRootObject of an NSMutableArray of UAGridState, records shared."""
    archive = Archive()
    records = []
    for name, color, date in [("Living room", 0xFF8800, "2013-05-01 10:00"),
                              ("Kitchen", 42, "2013-05-02 11:30"),
                              ("Hall", 0, "2013-05-03 09:15")]:
        records.append(archive.instance("UAGridState", {
            "kEncodeKeyName": archive.add(name),
            "kEncodeKeyColor": color,          # encodeInteger:forKey: stores the number inline
            "kEncodeKeyDate": archive.add(date),
        }))
    slots = [records[0], records[1], records[0], records[2], records[0]]
    root = archive.array(slots, "NSMutableArray", ("NSArray", "NSObject"))
    return archive.plist({"root": root})


def four_lines(class_name, key_prefix):
    """Seeds 000/001 (BIDFourLines, "Field1"...) and 003 (FourLines, "field1"...) under "Data"."""
    archive = Archive()
    lines = ["first line", "second line", "third line", "fourth line"]
    fields = {f"{key_prefix}{n + 1}": archive.add(line) for n, line in enumerate(lines)}
    return archive.plist({"Data": archive.instance(class_name, fields)})


def lines_model():
    """Seed 002: BIDFourLines holding an NSArray of lines under kLinesKey, root key kRootKey."""
    archive = Archive()
    lines = archive.array([archive.add(text) for text in ["one", "two", "three", "four"]])
    return archive.plist({"kRootKey": archive.instance("BIDFourLines", {"kLinesKey": lines})})


def values():
    """One instance of every Foundation value kind the reader maps."""
    archive = Archive()
    fields = {
        "int": -7,
        "bigUnsigned": 2**64 - 1,            # plistlib writes it in CF's 16-byte form
        "double": 2.5,
        "flag": True,
        "text": archive.add("plain ASCII"),
        "unicode": archive.add("grüße, 世界 🌍"),   # stored as UTF-16
        "mutableText": archive.instance("NSMutableString", {"NS.string": "mutable"},
                                        ("NSString", "NSObject")),
        "bytes": archive.add(b"\x00\x01\x02\xff"),
        "mutableBytes": archive.instance("NSMutableData", {"NS.data": b"\x03\x04"}, ("NSData", "NSObject")),
        "date": archive.instance("NSDate", {"NS.time": 400000000.5}),
        "numbers": archive.array([archive.add(1), archive.add(2), archive.add(3)]),
        "tags": archive.instance("NSSet", {"NS.objects": [archive.add("b"), archive.add("a")]}),
        "table": archive.dictionary([archive.add("one"), archive.add("two")], [archive.add(1), archive.add(2)]),
        "nothing": UID(0),
        "null": archive.instance("NSNull", {}),
    }
    return archive.plist({"root": archive.instance("Values", fields)})


def ring():
    """A ring of three nodes (next) plus a parent with children pointing back: cycles by UID."""
    archive = Archive()
    nodes = [archive.reserve() for _ in range(3)]
    parent = archive.reserve()
    children = archive.array(nodes)
    for index, uid in enumerate(nodes):
        archive.set(uid, {"label": index, "next": nodes[(index + 1) % 3], "parent": parent,
                          "children": archive.array([]), "$class": archive.class_uid("Node")})
    archive.set(parent, {"label": 99, "next": UID(0), "parent": UID(0), "children": children,
                         "$class": archive.class_uid("Node")})
    return archive.plist({"root": nodes[0], "parent": parent})


# MARK: - Hostile archives

def self_containing_array():
    archive = Archive()
    array = archive.reserve()
    archive.set(array, {"NS.objects": [array], "$class": archive.class_uid("NSArray")})
    return archive.plist({"root": array})


def uid_out_of_range():
    archive = Archive()
    record = archive.instance("UAGridState", {"kEncodeKeyName": UID(4000), "kEncodeKeyColor": 1,
                                              "kEncodeKeyDate": archive.add("2013")})
    return archive.plist({"root": archive.array([record], "NSMutableArray", ("NSArray", "NSObject"))})


def wrong_field_type():
    """kEncodeKeyColor holds a string where the model decodes an integer."""
    archive = Archive()
    record = archive.instance("UAGridState", {"kEncodeKeyName": archive.add("Hall"),
                                              "kEncodeKeyColor": archive.add("red"),
                                              "kEncodeKeyDate": archive.add("2013")})
    return archive.plist({"root": archive.array([record], "NSMutableArray", ("NSArray", "NSObject"))})


def unknown_class():
    archive = Archive()
    record = archive.instance("UAEvilPayload", {"command": archive.add("rm -rf /")})
    return archive.plist({"root": archive.array([record], "NSMutableArray", ("NSArray", "NSObject"))})


def wrong_archiver():
    return {**grid_states(), "$archiver": "NSFancyArchiver"}


def wrong_version():
    return {**grid_states(), "$version": 200000}


def no_classes():
    """A class entry with $classname only (no $classes), as older and hand-made archives have."""
    archive = Archive()
    name = archive.add("Living room")
    plain = archive.add({"$classname": "UAGridState"})
    record = archive.add({"kEncodeKeyName": name, "kEncodeKeyColor": 42, "kEncodeKeyDate": name, "$class": plain})
    root = archive.array([record, record], class_name="NSMutableArray", superclasses=("NSArray", "NSObject"))
    return archive.plist({"root": root})


def billion_laughs():
    """Thirty levels of arrays holding their child twice: 2^30 strings if copied inline."""
    archive = Archive()
    level = archive.add("lol")
    for _ in range(30):
        level = archive.array([level, level])
    return archive.plist({"root": level})


FIXTURES = {
    "python-gridstates": grid_states,
    "python-fourlines-bid": lambda: four_lines("BIDFourLines", "Field"),
    "python-fourlines": lambda: four_lines("FourLines", "field"),
    "python-lines": lines_model,
    "python-values": values,
    "python-ring": ring,
    "python-hostile-self-containing-array": self_containing_array,
    "python-hostile-uid-out-of-range": uid_out_of_range,
    "python-hostile-wrong-field-type": wrong_field_type,
    "python-hostile-unknown-class": unknown_class,
    "python-hostile-wrong-archiver": wrong_archiver,
    "python-hostile-wrong-version": wrong_version,
    "python-hostile-billion-laughs": billion_laughs,
    "python-no-classes": no_classes,
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "Tests", "GraphArchiveTests", "Fixtures", "KeyedArchives")
    output = sys.argv[1] if len(sys.argv) > 1 else default
    os.makedirs(output, exist_ok=True)
    for name, build in FIXTURES.items():
        data = plistlib.dumps(build(), fmt=plistlib.FMT_BINARY, sort_keys=False)
        with open(os.path.join(output, name + ".plist"), "wb") as file:
            file.write(data)
        print(f"{name}.plist: {len(data)} bytes")


if __name__ == "__main__":
    main()
