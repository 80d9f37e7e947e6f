// hive's approvals for Pi (loaded with `pi --mode rpc -e <this file>`; written by hive at run time).
// Pi runs its tools without asking; this holds every call in the `tool_call` hook until hive answers an `input`
// dialog whose title is the marker, a newline and {toolCallId, toolName, input} as JSON. hive answers
// {"approved": true, "input"?: {...}} (the call runs, with the changed arguments merged in) or
// {"approved": false, "reason": "..."}; a cancelled or unreadable answer blocks the call as well.
const MARKER = "hive:approve_tool:v1";

// hive's own question tool is answered through its own dialog: asking to ask would be noise.
const UNGATED = new Set(["ask_user_question"]);

export default function (pi) {
	pi.on("tool_call", async (event, ctx) => {
		if (UNGATED.has(event.toolName)) return undefined;
		const block = (reason) => ({ block: true, reason });
		if (!ctx.hasUI) return block("This call needs the user's approval, and no one can be asked here: it was not run.");
		const body = { toolCallId: event.toolCallId, toolName: event.toolName, input: event.input };
		const value = await ctx.ui.input(`${MARKER}\n${JSON.stringify(body)}`, "", { signal: ctx.signal });
		if (value === undefined || value === null) return block("The call was not approved: it was not run.");
		let answer;
		try {
			answer = JSON.parse(value);
		} catch {
			return block("The approval could not be read: the call was not run.");
		}
		if (!answer || answer.approved !== true) {
			const reason = answer && typeof answer.reason === "string" && answer.reason ? answer.reason : "";
			return block(reason || "The user rejected this call.");
		}
		// Pi runs the call with `event.input` as it is when the hook returns (no re-validation).
		if (answer.input && typeof answer.input === "object") Object.assign(event.input, answer.input);
		return undefined;
	});
}
