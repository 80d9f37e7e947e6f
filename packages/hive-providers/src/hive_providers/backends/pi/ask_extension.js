// hive's ask_user_question tool for Pi (loaded with `pi --mode rpc -e <this file>`; written by hive at run time).
// The question reaches hive as an `input` dialog whose title is the marker, a newline and the questions as JSON;
// hive answers with {"answers": {question: "label, label"}} as JSON, or cancels the dialog (a decline).
import { Type } from "typebox";

const MARKER = "hive:ask_user_question:v1";

const Option = Type.Object({
	label: Type.String({ description: "The option's label, shown to the user and returned when chosen" }),
	description: Type.Optional(Type.String({ description: "What the option means" })),
});

const Question = Type.Object({
	question: Type.String({ description: "The complete question to ask the user" }),
	header: Type.Optional(Type.String({ description: "A very short label for the question" })),
	options: Type.Array(Option, { description: "The choices (the user may also answer in free text)" }),
	multiSelect: Type.Optional(Type.Boolean({ description: "Whether several options may be chosen" })),
});

export default function (pi) {
	pi.registerTool({
		name: "ask_user_question",
		label: "Ask the user",
		description:
			"Ask the user one or more multiple-choice questions and wait for the answers. Use it when you need the user's decision to proceed.",
		parameters: Type.Object({ questions: Type.Array(Question, { minItems: 1 }) }),

		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const declined = (why) => ({ content: [{ type: "text", text: why }], details: { answers: null } });
			if (!ctx.hasUI) return declined("The user cannot be asked here: answer without asking.");
			const title = `${MARKER}\n${JSON.stringify({ toolCallId, questions: params.questions })}`;
			const value = await ctx.ui.input(title, "", { signal });
			if (value === undefined || value === null) return declined("The user declined to answer the question.");
			let answers;
			try {
				answers = JSON.parse(value).answers;
			} catch {
				return declined("The user's answer could not be read.");
			}
			if (!answers || typeof answers !== "object") return declined("The user declined to answer the question.");
			const pairs = Object.entries(answers).map(([q, a]) => `"${q}"="${a}"`);
			return {
				content: [{ type: "text", text: `User has answered your questions: ${pairs.join(", ")}.` }],
				details: { answers },
			};
		},
	});
}
