-- §4.4: the same answer through a derived stream.
CREATE STREAM long_running_functions AS (
  SELECT function, duration FROM calls
  WHERE duration > 1s
    AND function IN ('example.com/shop.(*Store).Find', 'example.com/shop.(*Store).Save', 'example.com/shop.Handler'));
SELECT lf.function, avg(lf.duration)
FROM long_running_functions AS lf WINDOW JOIN SAMPLE(cpu, 100ms) AS cu WINDOW 1min
WHERE cu.busy > 70%
GROUP BY lf.function
