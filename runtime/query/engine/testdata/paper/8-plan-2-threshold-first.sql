-- §5.3, plan 2: monitor the functions, and sample the CPU only while one of
-- them runs longer than a second.
CREATE TRIGGER busy_when_slow
FROM calls
WHEN duration > 1s AND function IN ('example.com/shop.(*Store).Find', 'example.com/shop.(*Store).Save')
BEGIN SAMPLE(cpu, 100ms) FOR 1min END
