-- §1, the compiler developer: how often each function is called, each minute.
SELECT function, count(*) AS calls FROM calls GROUP BY function WINDOW 1min
