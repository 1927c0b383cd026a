# One framestats CSV row per frame-log line "FLAGS INTENDED START END INTERVAL .", in the
# column order of the header `cols`; time columns between START and END in the order hwui
# takes them, durations small constants (used by ../device/dumpsys and to write the captures).
function at(f) { return sprintf("%.0f", s + f * (e - s)) }
BEGIN { n = split(cols, c, ",") }
{
	flags = $1; iv = $2; s = $3; e = $4; itv = $5
	row = ""
	for (i = 1; i <= n; i++) {
		k = c[i]
		if (k == "") continue
		if (k == "Flags") v = flags
		else if (k == "FrameTimelineVsyncId") v = 1000 + NR
		else if (k == "IntendedVsync") v = iv
		else if (k == "Vsync") v = s
		else if (k == "OldestInputEvent") v = "9223372036854775807"
		else if (k == "NewestInputEvent" || k == "InputEventId") v = 0
		else if (k == "FrameStartTime") v = s
		else if (k == "HandleInputStart") v = at(0.02)
		else if (k == "AnimationStart") v = at(0.04)
		else if (k == "PerformTraversalsStart") v = at(0.06)
		else if (k == "DrawStart") v = at(0.5)
		else if (k == "FrameDeadline") v = sprintf("%.0f", iv + 2 * itv)
		else if (k == "FrameInterval") v = itv
		else if (k == "SyncQueued") v = at(0.7)
		else if (k == "SyncStart") v = at(0.72)
		else if (k == "IssueDrawCommandsStart") v = at(0.75)
		else if (k == "SwapBuffers") v = at(0.9)
		else if (k == "FrameCompleted") v = e
		else if (k == "DequeueBufferDuration") v = 210000
		else if (k == "QueueBufferDuration") v = 290000
		else if (k == "GpuCompleted") v = sprintf("%.0f", e + 1200000)
		else if (k == "SwapBuffersCompleted") v = sprintf("%.0f", e + 400000)
		else if (k == "DisplayPresentTime") v = 0
		else if (k == "CommandSubmissionCompleted") v = at(0.95)
		else v = 0
		row = row v ","
	}
	print row
}
