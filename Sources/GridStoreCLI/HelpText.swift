// Sources/GridStoreCLI/HelpText.swift - what `--help` prints

/// The tool's version, printed by `gridstore --version`.
let toolVersion = "0.1.0"

/// Help texts: a one-line summary, a usage line, aligned options.
enum HelpText {
    static func text(for command: CommandName?) -> String {
        switch command {
        case nil: general
        case .save: save
        case .load: load
        case .verify: verify
        case .session: session
        case .convert: convert
        case .inspect: inspect
        }
    }

    static let general = """
        gridstore: save and load arrays of grid-state records as gridstore archives
        (and as Apple NSKeyedArchiver archives, which load, verify and convert
        recognize by themselves).

        Usage: gridstore [-q] COMMAND [OPTIONS]

        Commands:
          save      Fill the data source (generated or imported records), save it
          load      Print the archived records, or statistics with --stats
          verify    Check an archive completely; say what is wrong and where
          session   Keep the data source open, add records from standard input,
                    save on exit
          convert   Rewrite an archive as gridstore or as an NSKeyedArchiver
                    archive (keyed-plist)
          inspect   Print any archive (gridstore or keyed, any classes) as a
                    tree, as JSON, or as counts by class
          help      Show this help, or a command's: 'gridstore help COMMAND'

        Options:
          -h, --help    Show this help ('gridstore COMMAND --help' shows a
                        command's help)
          -q, --quiet   Show no progress and no informational lines; results,
                        warnings and errors still appear (also accepted among a
                        command's options)
          --version     Show the version

        The archive is --file PATH, else $GRIDSTORE_FILE, else
        $XDG_DATA_HOME/gridstore/grids.gridstore (~/.local/share/... when unset).
        '-' as the archive is standard input where a command reads one (load,
        verify, convert IN) and standard output where it writes one (save,
        convert OUT); a file named '-' is './-'.
        Exit status: 0 success, 1 failure (bad archive or input, I/O), 64 usage error.
        """

    static let save = """
        gridstore save: fill the data source with records and save it atomically.

        Usage: gridstore save [-q] [--file PATH] [--compress zstd[:LEVEL]|none]
                              [--format gridstore|keyed-plist] [--append]
                              (--generate N [--shared F] [--seed S]
                               | --input PATH|- [--strict]) [--lock-timeout SECONDS]
                              [--memory-limit SIZE]

        Options:
          --file PATH          Archive to write (default: see 'gridstore --help');
                               '-' writes it to standard output
          --compress METHOD    none, zstd (level 3) or zstd:LEVEL (-131072 to
                               22); gridstore format only. Default: none, or
                               with --append the archive's own (zstd at level 3,
                               as archives do not record their level)
          --format FORMAT      gridstore or keyed-plist: an NSKeyedArchiver
                               binary plist whose records are of class
                               UAGridState (the iOS app's). Default: gridstore,
                               or with --append the archive's own
          --append             Add to the records already archived (either
                               format) instead of replacing them; an append
                               that adds nothing leaves the file untouched
          --generate N         Make N records (array slots), 0 to \(maximumGeneratedRecords)
          --shared F           Fraction of slots, in [0, 1), that repeat an
                               earlier record (default 0): the first
                               N - floor(N*F) records are distinct
          --seed S             Seed for --generate; the same seed gives the same
                               records (default 1)
          --input PATH         Import JSON (an array), JSON Lines or CSV with the
                               header name,color,date[,id]; '-' reads standard
                               input. Records with the same id become one
                               shared instance. Colors are integers, #RRGGBB
                               or 0xHEX. Other JSON fields are skipped, other
                               CSV columns skipped with a warning.
          --strict             With --input: refuse other JSON fields and CSV
                               columns instead of skipping them
          --lock-timeout SECONDS
                               How long to wait for another process's lock on
                               the archive (default 10; 0: fail at once). The
                               save holds it while it writes, --append from
                               its load to its write
          --memory-limit SIZE  Most memory reading the archive (--append) and
                               making the records may take (e.g. 512M, 2G; K,
                               M, G, T are powers of 1024). Default: what the
                               machine and the process's limits leave, less a
                               reserve
          -q, --quiet          Print no summary line and no progress
          -h, --help           Show this help
        """

    static let load = """
        gridstore load: print the archived records, or statistics about the archive.

        Usage: gridstore load [-q] [--file PATH] [--stats] [--json] [--limit N]
                              [--memory-limit SIZE]

        Options:
          --file PATH    Archive to read (default: see 'gridstore --help'); '-'
                         reads it from standard input
          --stats        Print counts, sizes, compression, format version,
                         checksum and load time instead of the records
          --json         Records as JSON Lines (name, color, date, id; shared
                         records share their id); with --stats, one JSON object
          --limit N      Print at most N records
          --memory-limit SIZE
                         Most memory reading the archive may take (e.g.
                         512M, 2G; K, M, G, T are powers of 1024). Default:
                         what the machine and the process's limits leave,
                         less a reserve
          -q, --quiet    Print no progress and no note about an empty archive
          -h, --help     Show this help
        """

    static let verify = """
        gridstore verify: check every byte of an archive and decode all its records.

        Usage: gridstore verify [-q] [--file PATH] [--memory-limit SIZE]

        Options:
          --file PATH    Archive to check (default: see 'gridstore --help'); '-'
                         reads it from standard input
          --memory-limit SIZE
                         Most memory reading the archive may take (e.g.
                         512M, 2G; K, M, G, T are powers of 1024). Default:
                         what the machine and the process's limits leave,
                         less a reserve
          -q, --quiet    Print nothing when the archive is sound (the exit status
                         says it)
          -h, --help     Show this help

        Prints a summary when the archive is sound; otherwise says what is wrong
        and where (byte offset, key path) and exits with status 1.
        """

    static let session = """
        gridstore session: keep the data source open like an app; save it on exit.

        Usage: gridstore session [-q] [--file PATH] [--compress zstd[:LEVEL]|none]
                                 [--format gridstore|keyed-plist] [--strict]
                                 [--lock-timeout SECONDS] [--memory-limit SIZE]

        Loads the archive (a missing file is an empty store), prints 'loaded N',
        then reads JSON Lines records from standard input, adding each and printing
        'added N' (the new number of records). Saves when input ends and on
        SIGTERM, SIGINT or SIGHUP, in the archive's own format and compression
        unless --format or --compress say otherwise; a session that adds nothing
        writes nothing. A bad line is reported and skipped; the exit status is
        then 1.

        Options:
          --file PATH          Archive to load and save (default: see
                               'gridstore --help'); a file, not '-'
          --compress METHOD    none, zstd or zstd:LEVEL, for saving; default:
                               the archive's own (zstd at level 3, as archives
                               do not record their level), none for a new one
          --format FORMAT      gridstore or keyed-plist, for saving; default:
                               the archive's own, gridstore for a new one
          --strict             Reject a line with fields other than name, color,
                               date and id (by default they are skipped)
          --lock-timeout SECONDS
                               How long to wait for another process's lock on
                               the archive (default 10; 0: fail at once). The
                               session holds it from its load to its end
          --memory-limit SIZE  Most memory reading the archive may take (e.g.
                               512M, 2G; K, M, G, T are powers of 1024).
                               Default: what the machine and the process's
                               limits leave, less a reserve
          -q, --quiet          Print no 'loaded', 'added' or 'saved' lines
          -h, --help           Show this help
        """

    static let convert = """
        gridstore convert: rewrite an archive in another format, keeping every
        record and its sharing.

        Usage: gridstore convert [-q] IN OUT --to gridstore|keyed-plist
                                 [--compress zstd[:LEVEL]|none] [--lock-timeout SECONDS]
                                 [--memory-limit SIZE]

        IN may be a gridstore archive or an NSKeyedArchiver archive (told apart by
        its first bytes). OUT is written atomically (the old file or the whole new
        one), so IN may be OUT. keyed-plist output is a binary plist whose records
        are of class UAGridState, as the iOS app's NSKeyedUnarchiver expects.
        IN '-' reads standard input, OUT '-' writes standard output.

        Options:
          --to FORMAT          gridstore or keyed-plist (required)
          --compress METHOD    none (default), zstd or zstd:LEVEL; only with
                               --to gridstore
          --lock-timeout SECONDS
                               How long to wait for another process's lock on
                               OUT (default 10; 0: fail at once)
          --memory-limit SIZE  Most memory reading the archive may take (e.g.
                               512M, 2G; K, M, G, T are powers of 1024).
                               Default: what the machine and the process's
                               limits leave, less a reserve
          -q, --quiet          Print no summary line and no progress
          -h, --help           Show this help
        """

    static let inspect = """
        gridstore inspect: print any archive without its model classes.

        Usage: gridstore inspect [-q] [PATH | --file PATH | -] [--json | --summary]
                                 [--depth N] [--memory-limit SIZE]

        Reads a gridstore archive (of any model) or an Apple NSKeyedArchiver archive
        (binary or XML, any classes) and prints its top-level keys and every object
        with its class and fields. The tree (default) prints each object in full
        where it is first reached; later references show '→ #ID Class' and
        references that close a cycle '↻ #ID Class (cycle)'. '-' reads the archive
        from standard input.

        Options:
          --file PATH    Archive to read (default: see 'gridstore --help'); a plain
                         PATH works the same
          --json         The whole graph as one JSON document: {"format", "top",
                         "objects": [{"id", "class", "classes", "fields"}]}
          --summary      Objects and bytes per class, values per kind
          --depth N      Levels of the tree shown; deeper ones show as {…}
          --memory-limit SIZE
                         Most memory reading the archive may take (e.g.
                         512M, 2G; K, M, G, T are powers of 1024). Default:
                         what the machine and the process's limits leave,
                         less a reserve
          -q, --quiet    Accepted for symmetry; inspect prints only its result
          -h, --help     Show this help
        """
}
