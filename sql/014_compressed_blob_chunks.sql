-- How a blob's chunks are stored: NULL, raw bytes (resumable uploads, and every blob before this
-- migration); 'zstd', each chunk a zstd frame of its own (files written whole from one stream:
-- uploads and exports). Contract files compress 3 to 7 times, so a file costs PostgreSQL that much
-- less to store, log (WAL) and read back.
ALTER TABLE blobs ADD COLUMN chunk_encoding text CHECK (chunk_encoding IN ('zstd'));
