-- Meridian schema, version 6: the rows an import set aside (ImportOptions.keep_valid, `meridian ingest
-- --keep-valid`, the Data page's "import the valid rows and set the rest aside").
--   rejects   one row per problem of a row that was set aside: the file it came from (as imported), its
--             1-based physical line and the problem in words, as a rejected import would have listed it.
--             A row with several problems has several rows here. Deleted with its dataset.
--   imports.rejected_rows   how many of the file's rows were set aside (0 for a whole import).

CREATE TABLE rejects (
    dataset      VARCHAR NOT NULL,
    import_id    INTEGER NOT NULL,
    source_file  VARCHAR NOT NULL,
    line         BIGINT NOT NULL,
    problem      VARCHAR NOT NULL
);

ALTER TABLE imports ADD COLUMN rejected_rows BIGINT DEFAULT 0;
