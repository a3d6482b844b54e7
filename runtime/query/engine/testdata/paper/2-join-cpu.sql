-- §4.4: the functions whose calls run longer than a second while the CPU is
-- more than 70 % busy, with their mean duration (the paper selects
-- percent_busy ungrouped; here it is averaged, as SQL requires).
SELECT c.function, avg(c.duration), avg(cu.busy)
FROM calls AS c WINDOW JOIN SAMPLE(cpu, 100ms) AS cu WINDOW 1min
WHERE c.duration > 1s AND cu.busy > 70%
  AND c.function IN ('example.com/shop.(*Store).Find', 'example.com/shop.(*Store).Save', 'example.com/shop.Handler')
GROUP BY c.function
