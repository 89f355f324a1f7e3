-- An answer too large to keep whole (a 422 listing millions of row errors) is kept by reference:
-- the replay renders it again from the same stored rows, byte for byte.
ALTER TABLE idempotency_keys ADD COLUMN response_streamed jsonb;
