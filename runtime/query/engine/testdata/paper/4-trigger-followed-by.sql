-- §4.4: sample the CPU every 100 ms when Find is followed within a minute by
-- Save and both take more than five seconds.
CREATE TRIGGER sample_cpu
FROM calls AS f1 WINDOW JOIN calls AS f2 WINDOW 1min f1 FOLLOWED BY f2
WHEN f1.duration > 5s AND f2.duration > 5s
  AND f1.function = 'example.com/shop.(*Store).Find'
  AND f2.function = 'example.com/shop.(*Store).Save'
BEGIN SAMPLE(cpu, 100ms) FOR 1min END
