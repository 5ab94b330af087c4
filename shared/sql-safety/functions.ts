/**
 * Functions a read-only query may not call, per dialect.
 *
 * A deny-list, not an allow-list: PostgreSQL alone ships thousands of harmless functions (and extensions and users add
 * more), so an allow-list would refuse ordinary analytics and age with every release. What we deny is the small,
 * stable set of built-ins whose effect reaches outside the query's own READ ONLY transaction: they wait or hold
 * locks past it, touch the server's files, network or processes, change session settings, advance sequences, signal
 * other sessions, or run SQL given as a string (which no parser can see into).
 *
 * A function we do not know (a user-defined or extension function) is allowed here: the statement runs alone in a
 * READ ONLY transaction with a statement timeout, and that second layer refuses any table or sequence write such a
 * function attempts. This list exists for what that layer cannot stop.
 *
 * Names are matched case-insensitively on the function's own name, whatever schema qualifies it and however it is
 * quoted: refusing a same-named user function in another schema is a price worth paying for not being fooled by
 * `pg_catalog.pg_sleep` or `"PG_SLEEP"`.
 */
export interface FunctionDenyList {
  exact: ReadonlySet<string>;
  prefixes: readonly string[];
}

export const POSTGRES_DENIED: FunctionDenyList = {
  exact: new Set([
    // Settings and session state that outlive the statement (set_config(…, false) lasts the whole session).
    'set_config',
    // Sequences: advancing one is not undone by a rollback.
    'nextval',
    'setval',
    // Assign a transaction id (a write to the commit log) — refused by PostgreSQL in a read-only transaction anyway.
    'txid_current',
    'pg_current_xact_id',
    // Signals to other sessions and to the server.
    'pg_terminate_backend',
    'pg_cancel_backend',
    'pg_reload_conf',
    'pg_rotate_logfile',
    'pg_log_backend_memory_contexts',
    'pg_log_standby_snapshot',
    'pg_promote',
    // WAL, backups and recovery.
    'pg_switch_wal',
    'pg_switch_xlog',
    'pg_create_restore_point',
    'pg_start_backup',
    'pg_stop_backup',
    // Messages that leave the transaction (NOTIFY is delivered at commit; emit_message can be non-transactional).
    'pg_notify',
    'pg_logical_emit_message',
    // Replication slots and origins.
    'pg_drop_replication_slot',
    'pg_replication_slot_advance',
    'pg_sync_replication_slots',
    // Catalog writes.
    'pg_import_system_collations',
    // Large objects without the lo_ prefix.
    'loread',
    'lowrite',
    // adminpack's directory listing.
    'pg_logdir_ls',
    // ts_stat runs the query given to it as a string.
    'ts_stat',
    // pgsql-http's catch-all request function (the named methods are caught by the http_ prefix).
    'http',
  ]),
  prefixes: [
    'pg_sleep', // pg_sleep, pg_sleep_for, pg_sleep_until: hold a connection and locks for as long as asked
    'pg_read_', // pg_read_file, pg_read_binary_file: server files
    'pg_ls_', // pg_ls_dir, pg_ls_logdir, pg_ls_waldir, pg_ls_tmpdir, …: server directories
    'pg_stat_file',
    'pg_file_', // adminpack: pg_file_write, pg_file_rename, pg_file_unlink, pg_file_sync
    'lo_', // every large-object function: lo_import / lo_export touch server files, the rest read or write objects
    'dblink', // dblink, dblink_exec, dblink_connect, …: another connection, outside our transaction
    'pg_advisory', // advisory locks: session-level ones outlive the transaction
    'pg_try_advisory',
    'pg_stat_reset', // statistics resets are not transactional
    'pg_stat_statements_reset',
    'pg_create_', // replication slots, restore points
    'pg_copy_', // pg_copy_physical_replication_slot, pg_copy_logical_replication_slot
    'pg_logical_slot_', // get_changes consumes the slot; peek reads another session's decoded changes
    'pg_replication_origin_',
    'pg_backup_', // pg_backup_start, pg_backup_stop
    'pg_wal_replay_',
    'pg_xlog_replay_',
    'pg_restore_', // pg_restore_relation_stats, pg_restore_attribute_stats: write planner statistics
    'pg_clear_', // pg_clear_relation_stats, pg_clear_attribute_stats
    'query_to_xml', // query_to_xml, query_to_xmlschema, query_to_xml_and_xmlschema: run SQL given as a string
    'table_to_xml',
    'cursor_to_xml',
    'database_to_xml',
    'schema_to_xml',
    'http_', // pgsql-http / pg_net: network requests from the server
    'pg_background_', // pg_background: runs SQL given as a string in another backend
  ],
};

export const MYSQL_DENIED: FunctionDenyList = {
  exact: new Set([
    // Waits: hold the connection (and any locks) for as long as asked.
    'sleep',
    'benchmark',
    // Server files (with the FILE privilege).
    'load_file',
    // User-level locks are not transactional: a lock taken survives the statement's transaction.
    'get_lock',
    'release_lock',
    'release_all_locks',
    // Probing other sessions' locks: read-only, but only useful for coordinating with (or spying on) other sessions.
    'is_free_lock',
    'is_used_lock',
    // Replication waits.
    'master_pos_wait',
    'source_pos_wait',
    'master_gtid_wait',
    'wait_for_executed_gtid_set',
    'wait_until_sql_thread_after_gtids',
    // LAST_INSERT_ID(expr) sets the session's value (with no argument it only reads it; one name covers both, and an
    // analytical query has no use for either).
    'last_insert_id',
    // MariaDB sequences: NEXTVAL/SETVAL advance a sequence outside the transaction's rollback.
    'nextval',
    'setval',
    // lib_mysqludf_sys, the usual UDF for running shell commands from SQL.
    'sys_exec',
    'sys_eval',
    'sys_get',
    'sys_set',
  ]),
  // NAME_CONST is allowed: it only names a constant (it exists for replicating stored procedures).
  prefixes: [],
};

/** The denied name a call resolves to, or null: matched on the function's own name, schema ignored. */
export function deniedFunction(list: FunctionDenyList, name: string): string | null {
  const lower = name.toLowerCase();
  if (list.exact.has(lower) || list.prefixes.some((prefix) => lower.startsWith(prefix))) return lower;
  return null;
}
