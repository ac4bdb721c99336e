-- A session in /home/dev/invoicer with a subagent's session under it: three completed calls, one
-- that failed, one still running (status "streaming"), one of the subagent's.
INSERT INTO session VALUES ('ses_8f2a61c0d4', 'prj_1', 'ws_1', NULL, '/home/dev/invoicer', 'Add VAT rounding to invoice totals', 1781863200000, 1781863380000);
INSERT INTO session VALUES ('ses_8f2a61c0e7', 'prj_1', 'ws_1', 'ses_8f2a61c0d4', '/home/dev/invoicer/pkg/tax', 'Explore: rounding helpers', 1781863260000, 1781863300000);
INSERT INTO message VALUES ('msg_1', 'ses_8f2a61c0d4', 1781863200100, '{"role":"user"}');
INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_8f2a61c0d4', 1781863200100, '{"type":"text","text":"add VAT rounding to invoice totals"}');
INSERT INTO turn_usage VALUES ('ses_8f2a61c0d4', '1', 1781863200100, 1781863300000, 99900, 1800, 0, 3, NULL, 0);
INSERT INTO model_usage VALUES ('ses_8f2a61c0d4', '1', 'zai', 'glm-4.6', 'completed', 1830, 412, 96, 14200, 0, 16442, 16442, 1781863201000, 1781863209500, 8500, 1800, 1, 'main');
INSERT INTO model_usage VALUES ('ses_8f2a61c0d4', '1', 'zai', 'glm-4.6', 'completed', 2210, 655, 0, 1900, 14200, 18965, 18965, 1781863215000, 1781863226000, 11000, 1500, 2, 'main');
INSERT INTO model_usage VALUES ('ses_8f2a61c0d4', '1', 'zai', 'glm-4.6', 'error', 0, 0, 0, 0, 0, 0, 0, 1781863230000, 1781863231000, 1000, NULL, 0, 'main');
INSERT INTO model_usage VALUES ('ses_8f2a61c0e7', '1', 'zai', 'glm-4.5-air', 'completed', 5100, 380, 120, 0, 3000, 8480, 8480, 1781863262000, 1781863270000, 8000, 900, 2, 'subagent');
INSERT INTO model_usage VALUES ('ses_8f2a61c0d4', '2', 'zai', 'glm-4.6', 'streaming', 900, 0, 0, 0, 16100, NULL, 17000, 1781863360000, NULL, NULL, NULL, 0, 'main');
