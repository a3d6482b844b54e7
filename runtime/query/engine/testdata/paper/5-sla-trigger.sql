-- §1, the database administrator: when a request breaks its response-time
-- goal, the memory use around it and the recent detailed traces.
CREATE TRIGGER slow_request
FROM calls
WHEN function = 'example.com/shop.Handler' AND duration > 500ms
BEGIN SAMPLE(heap, 100ms) FOR 1min; FINE 'within(example.com/shop)' FOR 30s; SNAPSHOT END
